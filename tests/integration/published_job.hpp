// What the publishing programs (the publish sample, `tarry publish`) print
// and write, read back by their process tests: times in microseconds.
#pragma once

#include "amqp_client.hpp"
#include "process.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace amqp_it {

inline std::int64_t now_micros() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// "1767225600.250000" → microseconds.
inline std::int64_t micros_of_text(const std::string& s) {
    const auto dot = s.find('.');
    return std::stoll(s.substr(0, dot)) * 1000000 + std::stoll(s.substr(dot + 1));
}

/// The perform_job_at header a program wrote (a double), in microseconds.
inline std::int64_t written_due(const amqp::message& m) {
    REQUIRE(m.properties.headers);
    const auto* v = m.properties.headers->find("perform_job_at");
    REQUIRE(v);
    REQUIRE(v->get_if<double>());
    return std::llround(*v->get_if<double>() * 1e6);
}

/// What a publishing program prints once the broker confirmed a job.
inline const std::regex printed("published (\\S+) due ([0-9]+\\.[0-9]{6}) to (\\S+)\n");

/// A publishing program (`run` starts it with the given options and returns
/// how it ended) against the broker at `url`: a job due in 1.5 s with an id
/// and a body, then one due at a fixed epoch time without a body. Each is
/// confirmed (exit 0), printed as `printed` says, and written with the id,
/// persistent, and the due time it printed, to the microsecond.
template <class Run>
void check_publishes_as_printed(const std::string& url, const std::string& queue_prefix, Run run) {
    connected_client c(url);
    auto ch = c.open_channel();
    const auto q = unique_name(queue_prefix);
    value_of(ch.async_declare_queue(queue_opts(q, false, true), use_future));

    const auto before = now_micros();
    tarry_test::process_result r =
        run(std::vector<std::string>{"--url", url, "--queue", q, "--id", "job-1", "--delay-ms", "1500", "--body", "hi"});
    const auto after = now_micros();
    REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
    std::smatch m;
    REQUIRE_MESSAGE(std::regex_match(r.out, m, printed), r.out);
    CHECK(m[1] == "job-1");
    CHECK(m[3] == q);
    const auto due = micros_of_text(m[2]);
    CHECK(due >= before + 1'500'000);
    CHECK(due <= after + 1'500'000);
    auto got = value_of(ch.async_get(q, {.no_ack = true}, use_future));
    REQUIRE(got);
    CHECK(got->item.msg.properties.message_id == std::optional<std::string>("job-1"));
    CHECK(got->item.msg.properties.delivery_mode == std::optional<std::uint8_t>(2));
    CHECK(got->item.msg.body_view() == "hi");
    CHECK(std::llabs(written_due(got->item.msg) - due) <= 1);  // printed = written

    r = run(std::vector<std::string>{"--url", url, "--queue", q, "--id", "job-2", "--at", "1767225600.25"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
    CHECK(r.out == "published job-2 due 1767225600.250000 to " + q + "\n");
    got = value_of(ch.async_get(q, {.no_ack = true}, use_future));
    REQUIRE(got);
    CHECK(written_due(got->item.msg) == 1767225600250000);
    CHECK(got->item.msg.body.empty());
}

}  // namespace amqp_it
