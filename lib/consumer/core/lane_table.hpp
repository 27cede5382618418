// The consuming channels ("lanes") as the core sees them: each lane's
// current incarnation (a number; 0 = down), whether it consumes, and how
// many of its deliveries are unsettled and held, and since when the oldest
// of them is. The one owner of these counts. Single-threaded (the I/O
// thread), except lane_incarnations, which worker threads read to tell
// whether a job's delivery is still current, and oldest_unsettled(), which
// any thread may read.
#pragma once

#include "unsettled_window.hpp"

#include <atomic>
#include <cstddef>
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tarry::detail {

/// Each lane's current incarnation, readable from any thread.
class lane_incarnations {
public:
    explicit lane_incarnations(std::size_t lanes)
        : g_(std::make_unique<std::atomic<std::uint32_t>[]>(lanes)), n_(lanes) {}
    bool current(std::size_t lane, std::uint32_t incarnation) const noexcept {
        return incarnation != 0 && lane < n_ && g_[lane].load(std::memory_order_acquire) == incarnation;
    }
    std::uint32_t get(std::size_t lane) const noexcept { return g_[lane].load(std::memory_order_acquire); }
    void set(std::size_t lane, std::uint32_t incarnation) noexcept {
        g_[lane].store(incarnation, std::memory_order_release);
    }

private:
    std::unique_ptr<std::atomic<std::uint32_t>[]> g_;
    std::size_t n_;
};

struct lane_state {
    enum class intake {
        idle,        ///< takes no deliveries
        starting,    ///< basic.consume asked for
        consuming,   ///< its consumer takes deliveries
        cancelling,  ///< basic.cancel sent
    };
    intake state = intake::idle;
    std::string consumer_tag;   ///< while consuming or cancelling
    std::size_t unsettled = 0;  ///< deliveries of this incarnation not yet acked or nacked
    std::size_t holding = 0;    ///< of those, the ones that were held
    unsettled_window window;    ///< the unsettled ones by tag, and the oldest
    std::int64_t published_oldest = no_oldest;  ///< what oldest_unsettled() sees of this lane
    static constexpr std::int64_t no_oldest = INT64_MAX;
};

class lane_table {
public:
    static constexpr std::size_t none = static_cast<std::size_t>(-1);

    explicit lane_table(std::size_t lanes);

    std::size_t size() const noexcept { return lanes_.size(); }
    lane_state& operator[](std::size_t i) noexcept { return lanes_[i]; }
    const lane_state& operator[](std::size_t i) const noexcept { return lanes_[i]; }
    const std::shared_ptr<lane_incarnations>& incarnations() const noexcept { return incarnations_; }

    bool up(std::size_t lane) const noexcept { return incarnations_->get(lane) != 0; }
    bool current(std::size_t lane, std::uint32_t incarnation) const noexcept {
        return incarnations_->current(lane, incarnation);
    }
    /// A new incarnation of `lane` (its channel just opened): its counts
    /// start at zero. Returns its incarnation (never 0).
    std::uint32_t open(std::size_t lane);
    /// The incarnation `incarnation` of `lane` is gone. False when it was
    /// not the current one (already gone, or reported twice).
    bool close(std::size_t lane, std::uint32_t incarnation);

    /// The lane to consume next: of those not consuming nor starting, the
    /// one holding fewest, an open one first; `besides` excluded. none when
    /// there is no such lane.
    std::size_t next(std::size_t besides) const noexcept;

    /// A delivery of the lane's current incarnation arrived at `at` (steady ticks).
    void delivered(std::size_t lane, std::uint64_t tag, std::int64_t at);
    /// It is settled (acked or nacked): it leaves the lane's counts (and
    /// its held count when it was counted holding).
    void settled(std::size_t lane, std::uint64_t tag, bool counted_holding) noexcept;
    /// Every delivery of the lane is settled (one multiple nack).
    void settled_all(std::size_t lane) noexcept;
    /// Arrival (steady ticks) of the oldest delivery not yet settled, of
    /// every lane's current incarnation; empty when there is none. Any
    /// thread; O(lanes).
    std::optional<std::int64_t> oldest_unsettled() const noexcept;

private:
    void publish_oldest(std::size_t lane) noexcept;

    std::vector<lane_state> lanes_;
    std::shared_ptr<lane_incarnations> incarnations_;
    std::unique_ptr<std::atomic<std::int64_t>[]> oldest_;  // by lane: published_oldest, for any thread
    std::uint32_t last_incarnation_ = 0;
};

}  // namespace tarry::detail
