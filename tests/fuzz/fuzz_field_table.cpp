// Fuzz target: the field-table and field-array decoders.
//
// The input is read as a table (u32 byte length + entries) and, separately,
// as an array. Properties: no out-of-bounds access, no unbounded recursion
// or allocation (sanitizers, libFuzzer's memory limit), and whatever decodes
// round-trips: re-encoded, it decodes again to the same bytes (see
// fuzz_support.hpp for why bytes, not values, are compared).
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tarry_fuzz;
    const std::span<const std::uint8_t> input(data, size);
    table_round_trip<wire::field_table>(input);
    table_round_trip<wire::field_array>(input);
    return 0;
}
