// 128-bit ids as hex (see tarry/contract/random_id.hpp).
#include "tarry/contract/random_id.hpp"

#include <cstdio>
#include <random>

namespace tarry::contract {

std::string hex_id(std::uint64_t hi, std::uint64_t lo) {
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(hi),
                  static_cast<unsigned long long>(lo));
    return buf;
}

std::string random_hex_id() {
    thread_local std::mt19937_64 rng(std::random_device{}());
    const auto hi = rng();
    return hex_id(hi, rng());
}

}  // namespace tarry::contract
