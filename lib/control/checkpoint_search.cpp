// The backwards search for the newest complete checkpoint (see
// tarry/control/checkpoint_search.hpp).
#include "tarry/control/checkpoint_search.hpp"

#include <algorithm>

namespace tarry::control {

namespace {
// The widest blind step back while no checkpoint's last part was seen.
constexpr std::int64_t max_step = 1024;
}  // namespace

checkpoint_search::checkpoint_search(std::int64_t first, std::int64_t end, std::size_t max_entries)
    : first_(std::max<std::int64_t>(first, 0)), read_down_to_(std::max(end, first_)), max_entries_(max_entries) {
    if (read_down_to_ == first_) finish("the checkpoint stream holds nothing before its end");
    else next_ = range{read_down_to_ - 1, read_down_to_};
}

std::optional<checkpoint_search::range> checkpoint_search::next() const {
    if (done_) return std::nullopt;
    return next_;
}

void checkpoint_search::entry(std::int64_t offset, amqp::message m) {
    if (done_ || offset >= read_down_to_) return;
    ++read_;
    std::string why;
    const auto part = read_checkpoint_part(m.properties, why);
    if (!part) {
        if (!why.empty()) skipped_.push_back("offset " + std::to_string(offset) + ": " + why);
        return;
    }
    if (passed_over_.count(part->id)) return;
    auto& g = seen_[part->id];
    if (g.parts == 0) {
        g.parts = part->parts;
        g.covers = part->covers;
    }
    if (g.parts != part->parts || g.covers != part->covers || g.have.count(part->part)) {
        // Two checkpoints under one id, or a part twice: trust neither.
        if (!g.broken)
            skipped_.push_back("offset " + std::to_string(offset) + ": checkpoint '" + part->id +
                               "' has parts that disagree");
        g.broken = true;
        return;
    }
    if (part->part + 1 == part->parts) g.last_part_at = offset;
    g.have.emplace(part->part, std::move(m));
}

void checkpoint_search::range_read() {
    if (done_ || !next_) return;
    read_down_to_ = next_->from;
    decide();
    if (done_) return;
    if (read_ >= max_entries_)
        return finish("no complete checkpoint within the last " + std::to_string(read_) +
                      " entries of the checkpoint stream");
}

void checkpoint_search::decide() {
    for (;;) {
        // The candidate: the newest last part of a checkpoint not given up.
        auto best = seen_.end();
        for (auto it = seen_.begin(); it != seen_.end(); ++it) {
            if (it->second.broken || !it->second.last_part_at) continue;
            if (best == seen_.end() || *it->second.last_part_at > *best->second.last_part_at) best = it;
        }
        if (best == seen_.end()) {
            if (read_down_to_ <= first_) return finish("no complete checkpoint in the checkpoint stream");
            // None yet: step back blindly, wider each time.
            next_ = range{std::max(read_down_to_ - step_, first_), read_down_to_};
            step_ = std::min(step_ * 2, max_step);
            return;
        }
        auto& g = best->second;
        if (g.have.size() == g.parts) {
            std::string why;
            bool sound = true;
            for (const auto& [n, part] : g.have) {
                if (!read_checkpoint_records(part.body, {}, why)) {
                    skipped_.push_back("checkpoint '" + best->first + "' part " + std::to_string(n) + ": " + why);
                    sound = false;
                    break;
                }
            }
            if (sound) {
                result r{best->first, g.covers, {}};
                for (auto& [n, part] : g.have) r.parts.push_back(std::move(part));
                found_ = std::move(r);
                done_ = true;
                seen_.clear();
                return;
            }
            g.broken = true;
        } else {
            // Its other parts come before its last one: read down to where
            // the first would be, allowing for a writer beside it.
            const std::int64_t span = static_cast<std::int64_t>(g.parts) - 1;
            const std::int64_t first_at = *g.last_part_at - span;
            const std::int64_t lowest = first_at - span - 16;
            if (read_down_to_ > std::max(lowest, first_)) {
                const std::int64_t from = read_down_to_ > first_at ? first_at : read_down_to_ - (span + 16);
                next_ = range{std::max(from, first_), read_down_to_};
                return;
            }
            g.broken = true;  // a part is missing: an older checkpoint may be whole
        }
        passed_over_.insert(best->first);
        seen_.erase(best);
    }
}

void checkpoint_search::finish(std::string why) {
    done_ = true;
    next_.reset();
    why_none_ = std::move(why);
    seen_.clear();
}

}  // namespace tarry::control
