// Interop with a client nobody here wrote (Debian's pika, run with
// /usr/bin/python3): a pika-published message reaches tarry with every
// property and header intact (types included), and a tarry-published
// message reads back in pika with the same values.
#include "../integration/amqp_client.hpp"
#include "python_peer.hpp"

#include <boost/json/src.hpp>  // Boost.JSON, header-only, to read the peer's output

using namespace amqp_it;
namespace json = boost::json;

namespace {

std::string hex(const std::vector<std::uint8_t>& b) {
    static const char* d = "0123456789abcdef";
    std::string s;
    for (auto c : b) {
        s += d[c >> 4];
        s += d[c & 15];
    }
    return s;
}

template <class T>
const T& header(const amqp::field_table& t, const char* name) {
    const auto* v = t.find(name);
    REQUIRE_MESSAGE(v, "header " << name << " missing");
    const T* x = v->get_if<T>();
    REQUIRE_MESSAGE(x, "header " << name << " has tag '" << amqp::wire::field_tag(*v) << "'");
    return *x;
}

}  // namespace

TEST_CASE("pika publishes, tarry consumes: every property and header intact") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("from-pika");
    auto r = tarry_test::run_python("pika_peer.py", {"publish", url, q}, 60s);
    REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);

    connected_client c(url);
    auto ch = c.open_channel();
    inbox in;
    in.subscribe(ch, q);
    auto d = in.next();
    REQUIRE(d);
    ok(ch.async_ack(d->delivery_tag, {}, use_future));
    value_of(ch.async_delete_queue(q, {}, use_future));

    const auto& p = d->msg.properties;
    CHECK(d->msg.body_view() == std::string_view("body from pika \0\xff", 17));
    CHECK(p.content_type == "application/json");
    CHECK(p.content_encoding == "gzip");
    CHECK(p.delivery_mode == 2);
    CHECK(p.priority == 7);
    CHECK(p.correlation_id == "corr-42");
    CHECK(p.reply_to == "reply.q");
    CHECK(p.expiration == "3600000");
    CHECK(p.message_id == "msg-42");
    CHECK(p.timestamp == 1767225601u);
    CHECK(p.type == "job.kind");
    CHECK(p.user_id == "guest");
    CHECK(p.app_id == "pika-peer");
    CHECK(p.cluster_id == "c-9");
    REQUIRE(p.headers);
    const auto& h = *p.headers;
    CHECK(h.size() == 11);
    CHECK(header<std::int32_t>(h, "perform_job_at") == 1767225600);
    CHECK(header<std::int64_t>(h, "big") == (std::int64_t{1} << 40));
    CHECK(header<std::int32_t>(h, "negative") == -123456);
    CHECK(header<bool>(h, "flag"));
    CHECK(header<std::string>(h, "name") == "p\xc3\xa9ka");
    CHECK(header<amqp::decimal_value>(h, "price") == amqp::decimal_value{2, 1234});
    CHECK(header<amqp::timestamp_value>(h, "when").seconds == 1767225600u);
    CHECK(header<amqp::byte_array>(h, "raw").bytes == std::vector<std::uint8_t>{0, 1, 0xfe});
    CHECK(h.find("nothing")->get_if<amqp::void_value>());
    const auto& nested = header<amqp::field_table>(h, "nested");
    CHECK(header<std::int32_t>(nested, "a") == 1);
    CHECK(header<std::string>(nested, "b") == "two");
    CHECK_FALSE(header<bool>(header<amqp::field_table>(nested, "deeper"), "c"));
    const auto& list = header<amqp::field_array>(h, "list");
    REQUIRE(list.size() == 4);
    CHECK(*list[0].get_if<std::int32_t>() == 1);
    CHECK(*list[1].get_if<std::string>() == "x");
    CHECK_FALSE(*list[2].get_if<bool>());
    CHECK(list[3].get_if<amqp::field_table>());
}

TEST_CASE("tarry publishes, pika reads back the same values") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("to-pika");
    connected_client c(url);
    auto ch = c.open_channel();
    value_of(ch.async_declare_queue(queue_opts(q), use_future));
    ok(ch.async_confirm_select(use_future));

    amqp::basic_properties p;
    p.content_type = "text/plain";
    p.content_encoding = "utf-8";
    p.headers = amqp::field_table{
        {"bool", true},
        {"int16", std::int16_t{-1234}},
        {"uint16", std::uint16_t{54321}},
        {"int32", std::int32_t{-70000}},
        {"uint32", std::uint32_t{3000000000u}},
        // Positive: pika 1.2 reads 'l' as unsigned (as it swaps b/B and
        // truncates f/d), though RabbitMQ and tarry treat it as signed.
        {"int64", std::int64_t{5000000000}},
        {"decimal", amqp::decimal_value{3, 12345}},
        {"string", std::string("caf\xc3\xa9")},
        {"timestamp", amqp::timestamp_value{1767225600}},
        {"bytes", amqp::byte_array{{0xde, 0xad}}},
        {"void", amqp::void_value{}},
        {"table", amqp::field_table{{"inner", std::string("v")}, {"n", std::int32_t{3}}}},
        {"array", amqp::field_array{std::int32_t{1}, std::string("two"), false}},
    };
    p.delivery_mode = 1;
    p.priority = 4;
    p.correlation_id = "c-7";
    p.reply_to = "rq";
    p.expiration = "99000";
    p.message_id = "tarry-1";
    p.timestamp = 1767225602;
    p.type = "t";
    p.user_id = "guest";
    p.app_id = "tarry";
    p.cluster_id = "cl";
    const std::vector<std::uint8_t> body{'h', 'i', 0, 0xff};
    ok(ch.async_publish("", q, amqp::message(p, body), {}, use_future));

    auto r = tarry_test::run_python("pika_peer.py", {"read", url, q}, 60s);
    value_of(ch.async_delete_queue(q, {}, use_future));
    REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
    const json::object o = json::parse(r.out).as_object();
    CHECK(o.at("body").as_string() == hex(body));
    CHECK(o.at("routing_key").as_string() == q);
    CHECK(o.at("content_type").as_string() == "text/plain");
    CHECK(o.at("content_encoding").as_string() == "utf-8");
    CHECK(o.at("delivery_mode").as_int64() == 1);
    CHECK(o.at("priority").as_int64() == 4);
    CHECK(o.at("correlation_id").as_string() == "c-7");
    CHECK(o.at("reply_to").as_string() == "rq");
    CHECK(o.at("expiration").as_string() == "99000");
    CHECK(o.at("message_id").as_string() == "tarry-1");
    CHECK(o.at("timestamp").as_int64() == 1767225602);
    CHECK(o.at("type").as_string() == "t");
    CHECK(o.at("user_id").as_string() == "guest");
    CHECK(o.at("app_id").as_string() == "tarry");
    CHECK(o.at("cluster_id").as_string() == "cl");

    const json::object& h = o.at("headers").as_object();
    CHECK(h.size() == 13);
    const auto tag = [&](const char* name) -> const json::object& { return h.at(name).as_object(); };
    CHECK(tag("bool").at("bool").as_bool());
    CHECK(tag("int16").at("int").as_int64() == -1234);
    CHECK(tag("uint16").at("int").as_int64() == 54321);
    CHECK(tag("int32").at("int").as_int64() == -70000);
    CHECK(tag("uint32").at("int").as_int64() == 3000000000);
    CHECK(tag("int64").at("int").as_int64() == 5000000000);
    CHECK(tag("decimal").at("decimal").as_string() == "12.345");
    CHECK(tag("string").at("str").as_string() == "caf\xc3\xa9");
    CHECK(tag("timestamp").at("timestamp").as_int64() == 1767225600);
    CHECK(tag("bytes").at("bytes").as_string() == "dead");
    CHECK(tag("void").at("void").is_null());
    const auto& table = tag("table").at("table").as_object();
    CHECK(table.at("inner").as_object().at("str").as_string() == "v");
    CHECK(table.at("n").as_object().at("int").as_int64() == 3);
    const auto& array = tag("array").at("array").as_array();
    REQUIRE(array.size() == 3);
    CHECK(array[0].as_object().at("int").as_int64() == 1);
    CHECK(array[1].as_object().at("str").as_string() == "two");
    CHECK_FALSE(array[2].as_object().at("bool").as_bool());
}
