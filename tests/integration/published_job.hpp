// What the publishing programs (the publish sample, `tarry publish`) print
// and write, read back by their process tests: times in microseconds.
#pragma once

#include "amqp_client.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>

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

}  // namespace amqp_it
