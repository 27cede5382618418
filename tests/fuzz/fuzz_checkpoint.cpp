// Fuzz target: a checkpoint part's body (read_checkpoint_records;
// tarry/control/checkpoint.hpp, docs/control.md "Checkpoints").
//
// Input layout: the body, as a part of the checkpoint stream carries it.
//
// Properties:
// - nothing throws; a refusal says why, an acceptance leaves `why` empty;
// - round trip: the records of an accepted body, built again into one part
//   (checkpoint_builder), read back as the same records in the same order;
//   and the records of a refused body are a prefix of what it holds (the
//   same check on the records handed on before the fault);
// - the builder's bytes are canonical: building the records read back from
//   its own part gives the same bytes again.
#include "fuzz_support.hpp"

#include "tarry/control/checkpoint.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace tarry;

struct record {
    char kind = 0;
    std::string key, copy;
    std::uint64_t generation = 0;
    wall_time written{};
    friend bool operator==(const record&, const record&) = default;
};

std::vector<record> read_records(std::span<const std::uint8_t> body, bool& ok, std::string& why) {
    std::vector<record> out;
    control::checkpoint_visitor v{
        [&out](const control::tombstone& t) { out.push_back({'t', t.job_id, {}, t.generation, t.written}); },
        [&out](const control::tombstone& t) { out.push_back({'s', t.job_id, {}, t.generation, t.written}); },
        [&out](const control::run_claim& c) { out.push_back({'c', c.occurrence_id, c.copy, 0, c.written}); }};
    ok = control::read_checkpoint_records(body, v, why);
    return out;
}

std::vector<std::uint8_t> build(const std::vector<record>& records) {
    control::checkpoint_builder b(std::size_t{1} << 30);
    for (const auto& r : records) {
        if (r.kind == 't') b.add_tombstone({r.key, r.generation, r.written});
        else if (r.kind == 's') b.add_supersession({r.key, r.generation, r.written});
        else b.add_claim(r.key, r.copy, r.written);
    }
    auto parts = std::move(b).finish("fuzz", 0, wall_time{});
    tarry_fuzz::check(parts.size() == 1, "one part for any number of records under 1 GiB");
    return std::move(parts.front().body);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::uint8_t> body(data, size);
    bool ok = false;
    std::string why;
    const auto records = read_records(body, ok, why);
    tarry_fuzz::check(ok == why.empty(), "why is empty exactly when the body is accepted", why);

    const auto rebuilt = build(records);
    bool again_ok = false;
    std::string again_why;
    const auto again = read_records(rebuilt, again_ok, again_why);
    tarry_fuzz::check(again_ok, "the records read, built again, are accepted", again_why);
    tarry_fuzz::check(again == records, "the records read, built again, read back the same");
    tarry_fuzz::check(build(again) == rebuilt, "the builder's bytes are canonical");
    return 0;
}
