// `tarry topology export`'s two formats (tools/topology_export.hpp): the
// definitions' shape (what rabbitmqctl import_definitions reads: every
// object carries its vhost, arguments keep their types), the Terraform
// JSON's shape (cyrilgdn/rabbitmq resources, bindings depending on both
// ends), and that both describe the same queues, exchanges and bindings
// as the cascade's topology. (The import itself is tested on a fresh
// broker: tests/integration/delay_cascade_test.cpp.)
#include "topology_export.hpp"

#include "tarry/parking/delay_cascade.hpp"

#include <boost/json.hpp>
#include <doctest/doctest.h>

#include <cctype>
#include <map>
#include <set>
#include <string>
#include <tuple>

using namespace std::chrono_literals;
namespace json = boost::json;
namespace parking = tarry::parking;

namespace {

parking::cascade_topology sample(parking::cascade_strategy strategy, unsigned base) {
    parking::cascade_spec s;
    s.strategy = strategy;
    s.base = base;
    s.levels = 4;
    s.unit = 100ms;
    s.queue_type = tarry::amqp::queue_kind::quorum;
    return parking::delay_cascade(s).topology();
}

using binding_key = std::tuple<std::string, std::string, std::string, std::string>;  // source, dest, type, key

std::set<std::string> names(const json::array& a) {
    std::set<std::string> out;
    for (const auto& v : a) out.insert(std::string(v.at("name").as_string()));
    return out;
}

}  // namespace

TEST_CASE("definitions: the vhost, every exchange, queue and binding with its vhost and typed arguments") {
    for (auto [strategy, base] : {std::pair{parking::cascade_strategy::binary, 2u}, {parking::cascade_strategy::powers, 5u}}) {
        const auto t = sample(strategy, base);
        const json::object d = json::parse(cli::definitions_json(t, "delays")).as_object();
        REQUIRE(d.at("vhosts").as_array().size() == 1);
        CHECK(d.at("vhosts").as_array()[0].at("name").as_string() == "delays");
        const auto& xs = d.at("exchanges").as_array();
        const auto& qs = d.at("queues").as_array();
        const auto& bs = d.at("bindings").as_array();
        CHECK(xs.size() == t.exchanges.size());
        CHECK(qs.size() == t.queues.size());
        CHECK(bs.size() == t.bindings.size());
        for (const auto* a : {&xs, &qs, &bs})
            for (const auto& v : *a) CHECK(v.at("vhost").as_string() == "delays");
        std::set<std::string> want;
        for (const auto& q : t.queues) want.insert(q.name);
        CHECK(names(qs) == want);
        for (const auto& q : qs) {
            const auto& args = q.at("arguments").as_object();
            CHECK(args.at("x-queue-type").as_string() == "quorum");
            if (const auto* ttl = args.if_contains("x-message-ttl")) CHECK(ttl->is_int64());  // a number, not a string
            CHECK(q.at("durable").as_bool());
        }
        for (const auto& b : bs) {
            const auto type = b.at("destination_type").as_string();
            CHECK((type == "queue" || type == "exchange"));
        }
    }
}

TEST_CASE("terraform: cyrilgdn/rabbitmq resources describing the same objects as the definitions") {
    const auto t = sample(parking::cascade_strategy::powers, 3);
    const json::object d = json::parse(cli::definitions_json(t, "delays")).as_object();
    const json::object tf = json::parse(cli::terraform_json(t, "delays")).as_object();
    CHECK(tf.at("terraform").at("required_providers").at("rabbitmq").at("source").as_string() == "cyrilgdn/rabbitmq");
    const auto& r = tf.at("resource").as_object();
    CHECK(r.at("rabbitmq_vhost").at("tarry_vhost").at("name").as_string() == "delays");

    std::set<std::string> tf_queues, tf_exchanges;
    std::map<std::string, json::object> queue_args;
    for (const auto& [id, q] : r.at("rabbitmq_queue").as_object()) {
        const std::string name(q.at("name").as_string());
        tf_queues.insert(name);
        CHECK(q.at("vhost").as_string() == "${rabbitmq_vhost.tarry_vhost.name}");
        // arguments_json is a JSON string whose values keep their types.
        queue_args[name] = json::parse(q.at("settings").at("arguments_json").as_string()).as_object();
        for (char c : std::string(id)) CHECK((std::isalnum(static_cast<unsigned char>(c)) || c == '_'));
    }
    for (const auto& [id, x] : r.at("rabbitmq_exchange").as_object()) tf_exchanges.insert(std::string(x.at("name").as_string()));
    CHECK(tf_queues == names(d.at("queues").as_array()));
    CHECK(tf_exchanges == names(d.at("exchanges").as_array()));
    for (const auto& q : d.at("queues").as_array())
        CHECK(queue_args.at(std::string(q.at("name").as_string())) == q.at("arguments").as_object());

    std::set<binding_key> tf_bindings, def_bindings;
    for (const auto& [id, b] : r.at("rabbitmq_binding").as_object()) {
        tf_bindings.emplace(b.at("source").as_string(), b.at("destination").as_string(),
                            b.at("destination_type").as_string(), b.at("routing_key").as_string());
        CHECK(b.at("depends_on").as_array().size() == 2);
    }
    for (const auto& b : d.at("bindings").as_array())
        def_bindings.emplace(b.at("source").as_string(), b.at("destination").as_string(),
                             b.at("destination_type").as_string(), b.at("routing_key").as_string());
    CHECK(tf_bindings == def_bindings);
    CHECK(tf_bindings.size() == t.bindings.size());
}

TEST_CASE("terraform: the default vhost needs no vhost resource") {
    const json::object tf = json::parse(cli::terraform_json(sample(parking::cascade_strategy::binary, 2), "/")).as_object();
    CHECK_FALSE(tf.at("resource").as_object().contains("rabbitmq_vhost"));
    for (const auto& [id, q] : tf.at("resource").at("rabbitmq_queue").as_object()) CHECK(q.at("vhost").as_string() == "/");
}
