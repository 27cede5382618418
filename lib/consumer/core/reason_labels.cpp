#include "reason_labels.hpp"

#include "tarry/consumer/consumer_metrics.hpp"

#include <algorithm>
#include <span>

namespace tarry::detail {

namespace {
std::size_t label_of(std::span<const std::string_view> labels, std::string_view reason) noexcept {
    const std::string_view head = reason.substr(0, reason.find(':'));
    const auto known = labels.first(labels.size() - 1);  // the last one is "other"
    return static_cast<std::size_t>(std::find(known.begin(), known.end(), head) - known.begin());
}
}  // namespace

std::size_t dead_letter_label(std::string_view reason) noexcept { return label_of(dead_letter_reasons, reason); }
std::size_t requeue_label(std::string_view reason) noexcept { return label_of(requeue_reasons, reason); }

}  // namespace tarry::detail
