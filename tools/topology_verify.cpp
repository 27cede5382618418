// Checking a broker against a topology (see topology_verify.hpp).
#include "topology_verify.hpp"

#include "broker_session.hpp"

#include <boost/asio/use_future.hpp>

#include <future>
#include <tuple>
#include <type_traits>
#include <optional>

namespace cli {

namespace {

namespace amqp = tarry::amqp;
using boost::asio::use_future;

// A declare's outcome: the code and the broker's words; nothing when it did
// not complete within confirm_wait.
struct outcome {
    std::error_code code;
    std::string why;
};

template <class Future, class Code>
std::optional<outcome> waited(Future& f, Code code_of, const amqp::diagnostics& diag) {
    if (f.wait_for(confirm_wait) != std::future_status::ready) return std::nullopt;
    return outcome{code_of(f.get()), diag.message};
}

// Declares `part` (an exchange or a queue, as given) on a fresh channel.
template <class Options>
std::optional<outcome> declare_on_fresh_channel(amqp::connection& conn, Options part) {
    amqp::diagnostics diag;
    auto opened = conn.async_open_channel(diag, use_future);
    if (opened.wait_for(confirm_wait) != std::future_status::ready) return std::nullopt;
    auto [oe, ch] = opened.get();
    if (oe) return outcome{oe, "cannot open a channel: " + diag.message};
    std::optional<outcome> result;
    if constexpr (std::is_same_v<Options, amqp::exchange_options>) {
        auto f = ch.async_declare_exchange(std::move(part), diag, use_future);
        result = waited(f, [](std::error_code ec) { return ec; }, diag);
    } else {
        auto f = ch.async_declare_queue(std::move(part), diag, use_future);
        result = waited(f, [](const std::tuple<std::error_code, amqp::queue_info>& r) { return std::get<0>(r); },
                        diag);
    }
    if (ch.is_open()) ch.async_close(use_future).wait_for(confirm_wait);
    return result;
}

template <class Options>
verified check(amqp::connection& conn, const Options& expected, std::string part) {
    using verdict = verified::verdict;
    Options passive = expected;
    passive.passive = true;
    const auto found = declare_on_fresh_channel(conn, passive);
    if (!found) return {verdict::failed, std::move(part), "no answer within the wait"};
    if (found->code == amqp::reply_code::not_found) return {verdict::missing, std::move(part), {}};
    if (found->code) return {verdict::failed, std::move(part), found->why};
    Options active = expected;
    active.passive = false;
    const auto same = declare_on_fresh_channel(conn, active);
    if (!same) return {verdict::failed, std::move(part), "no answer within the wait"};
    if (same->code == amqp::reply_code::precondition_failed) return {verdict::differs, std::move(part), same->why};
    if (same->code) return {verdict::failed, std::move(part), same->why};
    return {verdict::ok, std::move(part), {}};
}

}  // namespace

std::vector<verified> verify_topology(amqp::connection& conn, const amqp::topology& t) {
    std::vector<verified> parts;
    for (const auto& x : t.exchanges) parts.push_back(check(conn, x, "exchange '" + x.name + "'"));
    for (const auto& q : t.queues) parts.push_back(check(conn, q, "queue '" + q.name + "'"));
    for (const auto& b : t.bindings)
        parts.push_back({verified::verdict::unchecked,
                         "binding of " + std::string(b.to_exchange ? "exchange" : "queue") + " '" + b.destination +
                             "' to '" + b.source + "' with '" + b.routing_key + "'",
                         "AMQP cannot read bindings"});
    return parts;
}

std::string verification_report(const std::vector<verified>& parts) {
    std::string out;
    for (const auto& p : parts) {
        switch (p.what) {
            case verified::verdict::ok: out += "ok           "; break;
            case verified::verdict::missing: out += "missing      "; break;
            case verified::verdict::differs: out += "differs      "; break;
            case verified::verdict::unchecked: out += "not checked  "; break;
            case verified::verdict::failed: out += "cannot check "; break;
        }
        out += p.part;
        if (!p.detail.empty()) out += ": " + p.detail;
        out += "\n";
    }
    return out;
}

bool all_ok(const std::vector<verified>& parts) {
    for (const auto& p : parts)
        if (p.what != verified::verdict::ok && p.what != verified::verdict::unchecked) return false;
    return true;
}

}  // namespace cli
