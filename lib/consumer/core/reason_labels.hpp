// Which label of tarry/consumer/consumer_metrics.hpp a reason counts under:
// the part of the reason before its first ':', or "other" (the last label)
// when that is none of the known ones, so that no count is lost and the
// counts by reason always add up to the totals.
#pragma once

#include <cstddef>
#include <string_view>

namespace tarry::detail {

/// The index in dead_letter_reasons of an x-tarry-reason.
std::size_t dead_letter_label(std::string_view reason) noexcept;
/// The index in requeue_reasons of a `requeued` event's reason.
std::size_t requeue_label(std::string_view reason) noexcept;

}  // namespace tarry::detail
