// Inputs RabbitMQ 3.10 refuses to deliver, on the consumer core: NaN and
// infinite doubles (the broker closes the publisher's connection, 541) and
// an expiration that is not a number (it closes the channel, 406). No
// consumer sees them through that broker, so the poison corpus on the real
// broker (tests/interop/poison_corpus_test.cpp) cannot send them; a broken
// peer or another broker could. A NaN or infinite schedule is dead-lettered
// with its reason; the same values elsewhere in the headers are no one's
// business but the handler's; a garbage expiration is ignored.
#include "core_harness.hpp"

#include <cmath>
#include <limits>

using namespace core_test;

namespace {

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

/// Delivers a message with these properties (message_id `id`, body "x").
void deliver_props(harness& h, std::uint32_t gen, std::uint64_t tag, std::string id, amqp::basic_properties p) {
    amqp::delivery d;
    d.delivery_tag = tag;
    d.msg.properties = std::move(p);
    d.msg.properties.message_id = std::move(id);
    d.msg.body = {'x'};
    h.core.delivery(0, gen, std::move(d), h.now());
}

amqp::basic_properties with_header(const std::string& name, amqp::field_value v) {
    amqp::basic_properties p;
    p.headers.emplace();
    p.headers->set(name, std::move(v));
    return p;
}

/// The double in header `name` of `p`, if it holds one.
std::optional<double> double_in(const amqp::basic_properties& p, const std::string& name) {
    const auto* v = p.headers ? p.headers->find(name) : nullptr;
    const auto* d = v ? v->get_if<double>() : nullptr;
    if (!d) return std::nullopt;
    return *d;
}

}  // namespace

TEST_CASE("a NaN or infinite perform_job_at or x-delay is dead-lettered with its reason, acked once confirmed") {
    struct c {
        const char* header;
        amqp::field_value value;
        const char* reason;
    };
    const c cases[] = {
        {"perform_job_at", nan_value, "invalid-schedule: perform_job_at is NaN"},
        {"perform_job_at", inf, "invalid-schedule: perform_job_at is infinite (inf)"},
        {"perform_job_at", -inf, "invalid-schedule: perform_job_at is infinite (-inf)"},
        {"perform_job_at", std::numeric_limits<float>::quiet_NaN(), "invalid-schedule: perform_job_at is NaN"},
        {"x-delay", nan_value, "invalid-schedule: x-delay is NaN"},
        {"x-delay", inf, "invalid-schedule: x-delay is infinite (inf)"},
        {"x-delay", -inf, "invalid-schedule: x-delay is infinite (-inf)"},
        {"x-delay", -std::numeric_limits<float>::infinity(), "invalid-schedule: x-delay is infinite (-inf)"},
    };
    for (const auto& k : cases) {
        CAPTURE(k.header);
        CAPTURE(k.reason);
        harness h;
        const auto gen = h.subscribe();
        deliver_props(h, gen, 1, "bad", with_header(k.header, k.value));
        CHECK_FALSE(h.pop());  // never run
        auto ps = h.take<action::publish>();
        REQUIRE(ps.size() == 1);
        CHECK(ps[0].routing_key == "jobs.dead");
        const auto* why = ps[0].message.properties.headers->find("x-tarry-reason");
        REQUIRE(why);
        CHECK(*why == amqp::field_value(std::string(k.reason)));
        CHECK(h.take<action::ack>().empty());  // not before its dead letter is confirmed

        h.core.copy_confirmed(ps[0].publish_id, h.now());
        const auto acks = h.take<action::ack>();
        REQUIRE(acks.size() == 1);
        CHECK(acks[0].tag == 1);
        const auto dead = h.events(job_event::kind::dead);
        REQUIRE(dead.size() == 1);
        CHECK(dead[0].id == "bad");
        CHECK(dead[0].reason == k.reason);
        CHECK(h.counters.dead_lettered == 1);
        CHECK(h.events(job_event::kind::run).empty());
    }
}

TEST_CASE("NaN and infinities elsewhere in the headers: the job runs when due, its headers as they came") {
    harness h;
    const auto gen = h.subscribe();
    amqp::basic_properties p;
    p.headers = amqp::field_table{
        {"ratio", nan_value},
        {"limits", amqp::field_table{{"max", inf}, {"min", -inf}}},
        {"samples", amqp::field_array{-inf, std::numeric_limits<float>::quiet_NaN()}},
        {"x-delay", std::int32_t{1500}},
    };
    deliver_props(h, gen, 1, "odd", p);
    CHECK(h.take<action::publish>().empty());  // held, not dead-lettered nor parked
    h.clock.advance(1499ms);
    CHECK_FALSE(h.pop());  // never early
    h.clock.advance(1ms);
    auto j = h.pop();
    REQUIRE(j);
    const auto seen = j->msg.properties();  // held packed: encoded and decoded again
    CHECK(std::isnan(double_in(seen, "ratio").value_or(0)));
    const auto* limits = seen.headers->find("limits")->get_if<amqp::field_table>();
    REQUIRE(limits);
    CHECK(*limits->find("max") == amqp::field_value(inf));
    CHECK(*limits->find("min") == amqp::field_value(-inf));
    const auto* samples = seen.headers->find("samples")->get_if<amqp::field_array>();
    REQUIRE(samples);
    REQUIRE(samples->size() == 2);
    CHECK((*samples)[0] == amqp::field_value(-inf));
    const auto* f = (*samples)[1].get_if<float>();
    REQUIRE(f);
    CHECK(std::isnan(*f));
    h.finish(std::move(*j), job_outcome::success());
    CHECK(h.take<action::ack>().size() == 1);
    CHECK(h.counters.succeeded == 1);
    CHECK(h.events(job_event::kind::dead).empty());
}

TEST_CASE("an expiration that is not a number is ignored: held and run when due, copies without it") {
    for (const char* expiration : {"soon", "", "-1", "1.5", "99999999999999999999999", "\xff\xfe"}) {
        CAPTURE(expiration);
        harness h;
        const auto gen = h.subscribe();
        auto soon = with_header("x-delay", std::int32_t{1500});
        soon.expiration = expiration;
        deliver_props(h, gen, 1, "soon", soon);
        auto later = with_header("x-delay", std::int32_t{60000});  // beyond the 2 s hold horizon
        later.expiration = expiration;
        deliver_props(h, gen, 2, "later", later);

        auto ps = h.take<action::publish>();
        REQUIRE(ps.size() == 1);  // the later one is parked, not dead-lettered
        CHECK(ps[0].routing_key.starts_with("jobs.wait."));
        CHECK(ps[0].message.properties.message_id == "later");
        CHECK_FALSE(ps[0].message.properties.expiration);
        h.core.copy_confirmed(ps[0].publish_id, h.now());
        CHECK(h.events(job_event::kind::parked).size() == 1);

        h.clock.advance(1499ms);
        CHECK_FALSE(h.pop());
        h.clock.advance(1ms);
        auto j = h.pop();
        REQUIRE(j);
        CHECK(j->msg.properties().message_id == "soon");
        h.finish(std::move(*j), job_outcome::success());
        CHECK(h.counters.succeeded == 1);
        CHECK(h.events(job_event::kind::dead).empty());
        CHECK(h.take<action::ack>().size() == 2);  // the parked one's, and the run's
    }
}
