// Lifecycle events on the real broker (docs/events.md): with publish_events
// on, a queue bound to `tarry.events` with `#.<queue>` receives each job's
// events with routing key `<event>.<queue>` and the fields of to_json (with
// events_per_message above 1, in JSON arrays of one kind, each event once); when
// the broker blocks publishing (a memory alarm on a private broker) jobs
// still succeed and are acked, events are dropped and counted, and after
// the alarm clears they flow again.
#include "consumer_fixture.hpp"
#include "json_line.hpp"
#include "private_broker.hpp"

#include <set>

using namespace consumer_it;

namespace {

// Fails attempts 1..k of every job, where k is the job's x-fail header.
tarry::job_outcome fail_first_k(const tarry::job& j) {
    const auto* k = j.headers().find("x-fail");
    const auto* n = k ? k->get_if<std::int32_t>() : nullptr;
    if (n && static_cast<std::int32_t>(j.attempt) <= *n)
        return tarry::job_outcome::failure("fails on attempt " + std::to_string(j.attempt));
    return tarry::job_outcome::success();
}

/// One lifecycle event as received: its routing key, properties and fields.
struct received_event {
    std::string routing_key;
    amqp::basic_properties properties;
    std::string body;
    json_line::fields fields;
    std::size_t in_message = 1;  ///< events in the message it came in (an array's length)
};

/// The objects of a body that is a JSON array of flat objects (strings may
/// hold any escaped character); empty when it is not one.
std::vector<std::string> array_elements(const std::string& body) {
    std::vector<std::string> out;
    if (body.size() < 2 || body.front() != '[' || body.back() != ']') return {};
    bool in_string = false, escaped = false;
    std::size_t start = 0;
    for (std::size_t i = 1; i + 1 < body.size(); ++i) {
        const char ch = body[i];
        if (in_string) {
            if (escaped) escaped = false;
            else if (ch == '\\') escaped = true;
            else if (ch == '"') in_string = false;
        } else if (ch == '"') {
            in_string = true;
        } else if (ch == '{') {
            start = i;
        } else if (ch == '}') {
            out.push_back(body.substr(start, i - start + 1));
        }
    }
    return out;
}

/// A queue of the test's own bound to the events exchange with `#.<queue>`;
/// fetches what arrives with basic.get.
class event_tap {
public:
    event_tap(connected_client& c, const std::string& exchange, const std::string& work_queue)
        : ch_(c.open_channel()), name_(unique_name("events-tap")) {
        amqp::queue_options q;
        q.name = name_;
        q.exclusive = true;
        value_of(ch_.async_declare_queue(q, use_future));
        ok(ch_.async_bind_queue(name_, exchange, "#." + work_queue, {}, use_future));
    }
    /// Fetches until pred(events) holds or `t` passes; the final answer.
    bool wait_until(const std::function<bool(const std::vector<received_event>&)>& pred,
                    std::chrono::milliseconds t) {
        const auto deadline = std::chrono::steady_clock::now() + t;
        for (;;) {
            while (auto got = value_of(ch_.async_get(name_, {.no_ack = true}, use_future))) {
                const std::string body(got->item.msg.body_view());
                // One object, or (events_per_message above 1) an array of them.
                auto bodies = body.starts_with("[") ? array_elements(body) : std::vector<std::string>{body};
                REQUIRE_MESSAGE(!bodies.empty(), "not a JSON array of objects: " << body);
                ++messages;
                for (auto& one : bodies) {
                    received_event e;
                    e.routing_key = got->item.routing_key;
                    e.properties = got->item.msg.properties;
                    e.body = std::move(one);
                    e.in_message = body.starts_with("[") ? bodies.size() : 1;
                    auto parsed = json_line::parse(e.body);
                    REQUIRE_MESSAGE(parsed, "not a flat JSON object: " << e.body);
                    e.fields = std::move(*parsed);
                    events.push_back(std::move(e));
                }
            }
            if (pred(events)) return true;
            if (std::chrono::steady_clock::now() > deadline) return false;
            std::this_thread::sleep_for(20ms);
        }
    }
    /// The events of job `id`, in arrival order, as "event" names.
    std::vector<std::string> names_of(const std::string& id) const {
        std::vector<std::string> out;
        for (const auto& e : events)
            if (e.fields.at("id") == id) out.push_back(e.fields.at("event"));
        return out;
    }
    std::size_t count(const std::string& id, const std::string& event) const {
        std::size_t n = 0;
        for (const auto& e : events) n += e.fields.at("id") == id && e.fields.at("event") == event;
        return n;
    }

    std::vector<received_event> events;
    std::size_t messages = 0;

private:
    amqp::channel ch_;
    std::string name_;
};

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
    return s;
}

}  // namespace

TEST_CASE("lifecycle events: success, retry then success, dead letter, each with its key and fields") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("events"));
    o.publish_events = true;
    o.retry = tarry::retry::backoff_policy::fixed(100ms).with_max_attempts(2);
    running_consumer rc(url, o, fail_first_k);  // declares tarry.events
    event_tap tap(c, "tarry.events", o.queue);
    {
        auto ch = confirm_channel(c);
        publish_raw(ch, o.queue, "ok", {});
        publish_raw(ch, o.queue, "again", {{"x-fail", std::int32_t{1}}});
        publish_raw(ch, o.queue, "doomed", {{"x-fail", std::int32_t{9}}});
    }
    const std::map<std::string, std::vector<std::string>> expected = {
        {"ok", {"run", "succeeded"}},
        {"again", {"run", "retry", "run", "succeeded"}},
        {"doomed", {"run", "retry", "run", "dead"}},
    };
    const bool all = tap.wait_until(
        [&](const auto&) {
            for (const auto& [id, names] : expected)
                if (tap.names_of(id).size() < names.size()) return false;
            return true;
        },
        15s);
    for (const auto& [id, names] : expected) CHECK_MESSAGE(tap.names_of(id) == names, id << ": " << joined(tap.names_of(id)));
    REQUIRE(all);
    for (const auto& e : tap.events) {
        CAPTURE(e.body);
        const auto& f = e.fields;
        CHECK(e.routing_key == f.at("event") + "." + o.queue);
        CHECK(f.at("queue") == o.queue);
        CHECK(json_line::epoch_micros(f.at("due")));
        const auto at = json_line::epoch_micros(f.at("at"));
        REQUIRE(at);
        CHECK(e.properties.content_type == "application/json");
        CHECK(e.properties.delivery_mode == std::uint8_t{1});
        REQUIRE(e.properties.timestamp);
        CHECK(static_cast<std::int64_t>(*e.properties.timestamp) == *at / 1000000);
        // Only the fields that apply.
        CHECK((f.count("next_due") == 1) == (f.at("event") == "retry"));
        CHECK((f.count("reason") == 1) == (f.at("event") == "dead"));
        CHECK(f.count("cancel_requested") == 0);
    }
    // Attempts as they ran, and the dead letter's reason.
    for (const auto& e : tap.events) {
        const auto& f = e.fields;
        if (f.at("id") == "again" && f.at("event") == "succeeded") CHECK(f.at("attempt") == "2");
        if (f.at("id") == "doomed" && f.at("event") == "dead") {
            CHECK(f.at("attempt") == "2");
            CHECK(f.at("reason").starts_with("attempts-exhausted"));
        }
    }
    // The same events the hook saw, published and none dropped.
    const auto st = rc.worker.stats();
    CHECK(st.events_published >= tap.events.size());
    CHECK(st.events_dropped == 0);
    rc.worker.stop();
    cleanup(c, o);
}

TEST_CASE("lifecycle events: a consumer with events on declares its exchange; one of another type fails start") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("events-x"));
    o.publish_events = true;
    o.events_exchange = unique_name("events-fanout");
    amqp::exchange_options x;
    x.name = o.events_exchange;
    x.type = "fanout";
    ok(c.open_channel().async_declare_exchange(x, use_future));
    tarry::consumer worker(config_of(url), o, succeed);
    try {
        worker.start();
        FAIL("start() succeeded with an events exchange of another type");
    } catch (const tarry::error& e) {
        CHECK_MESSAGE(std::string(e.what()).find(o.events_exchange) != std::string::npos, e.what());
    }
    ok(c.open_channel().async_delete_exchange(o.events_exchange, {}, use_future));
    cleanup(c, o);
}

TEST_CASE("lifecycle events: a memory alarm drops and counts events, never holds back a job; then they flow again") {
    TARRY_REQUIRE_BROKER(shared_url);  // skipped, like the rest, outside a broker run
    // A private broker: its alarm blocks every connection that publishes.
    tarry_test::private_broker broker;
    const auto& url = broker.url();
    connected_client c(url);
    auto o = options_for(unique_name("events-alarm"));
    o.publish_events = true;
    running_consumer rc(url, o);
    event_tap tap(c, "tarry.events", o.queue);
    constexpr int jobs = 20;
    const auto t0 = sys::now();
    {
        auto ch = confirm_channel(c);
        publish_raw(ch, o.queue, "before", {});
        // Spread over 2 s from t0 + 3 s: the alarm is on by then.
        for (int i = 0; i < jobs; ++i)
            publish_raw(ch, o.queue, "held" + std::to_string(i), {{"perform_job_at", epoch(t0 + 3s + i * 100ms)}});
    }
    REQUIRE(tap.wait_until([&](const auto&) { return tap.count("before", "succeeded") == 1; }, 10s));
    REQUIRE(wait_held(rc, jobs));
    const auto alarm = broker.ctl({"set_vm_memory_high_watermark", "0.000001"});
    REQUIRE_MESSAGE(alarm.exit_code == 0, alarm.err);
    REQUIRE_MESSAGE(sys::now() < t0 + 2500ms, "rabbitmqctl took too long: the jobs fell due before the alarm");
    // Every job runs and is acked while the broker refuses publishes.
    REQUIRE(rc.log.wait_count(kind::succeeded, jobs + 1, 15s));
    std::size_t unacked = 0;
    for (int i = 0; i < 50; ++i) {  // acks travel asynchronously
        unacked = unacked_in(broker, o.queue);
        if (unacked == 0) break;
        std::this_thread::sleep_for(100ms);
    }
    CHECK(unacked == 0);
    // Every event settled: published (handed to the connection) or dropped.
    const std::uint64_t events = 2 * (jobs + 1);
    CHECK(wait_stats(rc, [&](const tarry::consumer_stats& s) {
        return s.events_published + s.events_dropped == events;
    }));
    const auto during = rc.worker.stats();
    CHECK(during.succeeded == jobs + 1);
    CHECK(during.events_dropped > 0);
    INFO("published " << during.events_published << ", dropped " << during.events_dropped);

    const auto clear = broker.ctl({"set_vm_memory_high_watermark", "0.4"});
    REQUIRE_MESSAGE(clear.exit_code == 0, clear.err);
    {
        auto ch = confirm_channel(c);
        publish_raw(ch, o.queue, "after", {});
    }
    CHECK(tap.wait_until([&](const auto&) { return tap.count("after", "succeeded") == 1; }, 15s));
    CHECK(tap.names_of("after") == std::vector<std::string>{"run", "succeeded"});
    const auto later = rc.worker.stats();
    CHECK(later.events_published >= during.events_published + 2);
    CHECK(later.events_dropped == during.events_dropped);
    rc.worker.stop();
}

TEST_CASE("lifecycle events several a message: JSON arrays of one kind, each event once, at most N a message") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("events-batch"));
    o.publish_events = true;
    o.events_per_message = 50;
    running_consumer rc(url, o);
    event_tap tap(c, "tarry.events", o.queue);
    // 300 jobs falling due at the same moment: their events wait together.
    constexpr std::size_t n = 300;
    publish_many(url, o.queue, "b", std::vector<sys::time_point>(n, sys::now() + 1500ms));
    const auto count_of = [&](const std::string& what) {
        return static_cast<std::size_t>(std::count_if(tap.events.begin(), tap.events.end(), [&](const auto& e) {
            return e.fields.at("event") == what;
        }));
    };
    REQUIRE(tap.wait_until([&](const auto&) { return count_of("succeeded") == n; }, 20s));
    CHECK(count_of("run") == n);
    std::set<std::string> ran, succeeded;
    for (const auto& e : tap.events) {
        CAPTURE(e.body);
        CHECK(e.routing_key == e.fields.at("event") + "." + o.queue);  // one kind per message
        CHECK(e.in_message <= 50);
        CHECK(e.properties.content_type == "application/json");
        auto& ids = e.fields.at("event") == "run" ? ran : succeeded;
        CHECK_MESSAGE(ids.insert(e.fields.at("id")).second, "twice: " << e.body);
    }
    CHECK(ran.size() == n);
    CHECK(succeeded.size() == n);
    // Fewer messages than events: they did share messages.
    MESSAGE(tap.events.size() << " events in " << tap.messages << " messages");
    CHECK(tap.messages < tap.events.size());
    const auto st = rc.worker.stats();
    CHECK(st.events_published == 2 * n);
    CHECK(st.events_dropped == 0);
    rc.worker.stop();
    cleanup(c, o);
}
