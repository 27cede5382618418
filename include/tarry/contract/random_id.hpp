// Ids of 128 bits as 32 lowercase hex digits: a job's message_id when the
// publisher makes one, an occurrence copy's x-tarry-copy, a checkpoint's
// id. Pure but for the random source (one per thread). Any thread.
#pragma once

#include <cstdint>
#include <string>

namespace tarry::contract {

/// `hi` then `lo` as 32 lowercase hex digits, each zero-padded to 16.
std::string hex_id(std::uint64_t hi, std::uint64_t lo);
/// hex_id of 128 random bits (a per-thread generator seeded from
/// std::random_device).
std::string random_hex_id();

}  // namespace tarry::contract
