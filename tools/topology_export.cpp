// A topology as definitions JSON and Terraform JSON (see
// topology_export.hpp).
#include "topology_export.hpp"

#include "tarry/amqp/wire/field_table.hpp"

#include <boost/json.hpp>

#include <cctype>
#include <string>

namespace cli {

namespace json = boost::json;
using tarry::amqp::topology;

namespace {

// The declare arguments: integers and strings only (all tarry declares).
json::object arguments_of(const tarry::amqp::field_table& args) {
    json::object out;
    for (const auto& e : args.entries()) {
        if (const auto* s = e.value.get_if<std::string>()) out[e.name] = *s;
        else if (auto n = tarry::amqp::wire::integer_of(e.value)) out[e.name] = *n;
    }
    return out;
}

// Pretty-prints `v` (two spaces per level).
void pretty(std::string& out, const json::value& v, int depth) {
    const std::string pad(2 * (depth + 1), ' '), close(2 * depth, ' ');
    if (v.is_object()) {
        const auto& o = v.get_object();
        if (o.empty()) return void(out += "{}");
        out += "{\n";
        bool first = true;
        for (const auto& [k, x] : o) {
            if (!first) out += ",\n";
            first = false;
            out += pad + json::serialize(json::string(k)) + ": ";
            pretty(out, x, depth + 1);
        }
        out += "\n" + close + "}";
    } else if (v.is_array()) {
        const auto& a = v.get_array();
        if (a.empty()) return void(out += "[]");
        out += "[\n";
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (i) out += ",\n";
            out += pad;
            pretty(out, a[i], depth + 1);
        }
        out += "\n" + close + "]";
    } else {
        out += json::serialize(v);
    }
}

std::string printed(const json::value& v) {
    std::string out;
    pretty(out, v, 0);
    return out + "\n";
}

// A Terraform resource name for a broker name: letters, digits and _ only.
std::string resource_name(const std::string& prefix, const std::string& name) {
    std::string out = prefix;
    for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
    return out;
}

}  // namespace

std::string definitions_json(const topology& t, const std::string& vhost) {
    json::array exchanges, queues, bindings;
    for (const auto& x : t.exchanges)
        exchanges.push_back(json::object{{"name", x.name},
                                         {"vhost", vhost},
                                         {"type", x.type},
                                         {"durable", x.durable},
                                         {"auto_delete", x.auto_delete},
                                         {"internal", x.internal},
                                         {"arguments", arguments_of(x.arguments)}});
    for (const auto& q : t.queues)
        queues.push_back(json::object{{"name", q.name},
                                      {"vhost", vhost},
                                      {"durable", q.durable},
                                      {"auto_delete", q.auto_delete},
                                      {"arguments", arguments_of(q.arguments)}});
    for (const auto& b : t.bindings)
        bindings.push_back(json::object{{"source", b.source},
                                        {"vhost", vhost},
                                        {"destination", b.destination},
                                        {"destination_type", b.to_exchange ? "exchange" : "queue"},
                                        {"routing_key", b.routing_key},
                                        {"arguments", json::object{}}});
    return printed(json::object{{"vhosts", json::array{json::object{{"name", vhost}}}},
                                {"exchanges", std::move(exchanges)},
                                {"queues", std::move(queues)},
                                {"bindings", std::move(bindings)}});
}

std::string terraform_json(const topology& t, const std::string& vhost) {
    json::object vhosts, exchanges, queues, bindings;
    // Every resource names its vhost through the vhost resource when there
    // is one, so Terraform creates the vhost first.
    json::value vhost_ref = json::string(vhost);
    if (vhost != "/") {
        vhosts["tarry_vhost"] = json::object{{"name", vhost}};
        vhost_ref = "${rabbitmq_vhost.tarry_vhost.name}";
    }
    for (const auto& x : t.exchanges) {
        json::object settings{{"type", x.type}, {"durable", x.durable}, {"auto_delete", x.auto_delete}};
        if (!x.arguments.entries().empty()) settings["arguments"] = arguments_of(x.arguments);
        exchanges[resource_name("x_", x.name)] =
            json::object{{"name", x.name}, {"vhost", vhost_ref}, {"settings", std::move(settings)}};
    }
    for (const auto& q : t.queues) {
        json::object settings{{"durable", q.durable}, {"auto_delete", q.auto_delete}};
        if (!q.arguments.entries().empty()) settings["arguments_json"] = json::serialize(arguments_of(q.arguments));
        queues[resource_name("q_", q.name)] =
            json::object{{"name", q.name}, {"vhost", vhost_ref}, {"settings", std::move(settings)}};
    }
    const auto exchange_address = [](const std::string& name) {
        return "rabbitmq_exchange." + resource_name("x_", name);
    };
    for (std::size_t i = 0; i < t.bindings.size(); ++i) {
        const auto& b = t.bindings[i];
        json::array deps{exchange_address(b.source),
                         b.to_exchange ? exchange_address(b.destination)
                                       : "rabbitmq_queue." + resource_name("q_", b.destination)};
        bindings["b_" + std::to_string(i)] = json::object{{"source", b.source},
                                                          {"vhost", vhost_ref},
                                                          {"destination", b.destination},
                                                          {"destination_type", b.to_exchange ? "exchange" : "queue"},
                                                          {"routing_key", b.routing_key},
                                                          {"depends_on", std::move(deps)}};
    }
    json::object resources;
    if (!vhosts.empty()) resources["rabbitmq_vhost"] = std::move(vhosts);
    resources["rabbitmq_exchange"] = std::move(exchanges);
    resources["rabbitmq_queue"] = std::move(queues);
    resources["rabbitmq_binding"] = std::move(bindings);
    return printed(json::object{
        {"terraform",
         json::object{{"required_providers", json::object{{"rabbitmq", json::object{{"source", "cyrilgdn/rabbitmq"}}}}}}},
        {"resource", std::move(resources)}});
}

}  // namespace cli
