// Shared by the contract's unit tests: a fixed arrival time, a message with
// one header, and a time in microseconds.
#pragma once

#include "tarry/contract/schedule_headers.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace contract_test {

using namespace std::chrono_literals;
namespace wire = tarry::amqp::wire;

inline const tarry::wall_time arrival = tarry::wall_time(1767225600s);  // 2026-01-01T00:00:00Z

inline wire::basic_properties with(std::string name, wire::field_value v) {
    wire::basic_properties p;
    p.headers = wire::field_table{};
    p.headers->set(std::move(name), std::move(v));
    return p;
}

inline std::int64_t micros(tarry::wall_time t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

}  // namespace contract_test
