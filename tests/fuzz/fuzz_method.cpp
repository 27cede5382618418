// Fuzz target: decode_method on a method frame's payload.
//
// Properties: no out-of-bounds access or unbounded allocation (sanitizers);
// whatever decodes names the ids it was read from, re-encodes to the same
// length, and decodes again to the same bytes (see fuzz_support.hpp).
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    tarry_fuzz::method_round_trip(std::span<const std::uint8_t>(data, size));
    return 0;
}
