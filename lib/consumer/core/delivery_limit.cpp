// A quorum queue's delivery limit (see the header).
#include "delivery_limit.hpp"

#include <algorithm>
#include <charconv>

namespace tarry::detail {

namespace {
// The major version of "4.0.5", "3.10.8", "4.1.0-rc.1"; empty when it does
// not start with digits followed by a dot.
std::optional<unsigned> major_of(std::string_view version) {
    unsigned major = 0;
    const auto* end = version.data() + version.size();
    const auto [p, ec] = std::from_chars(version.data(), end, major);
    if (ec != std::errc{} || p == end || *p != '.') return std::nullopt;
    return major;
}
}  // namespace

std::optional<std::uint32_t> delivery_limit_in_force(std::optional<std::uint32_t> told,
                                                     std::string_view broker_version) {
    if (told) return *told == 0 ? std::nullopt : told;
    const auto major = major_of(broker_version);
    if (major && *major < 4) return std::nullopt;
    return broker_default_delivery_limit;
}

std::optional<std::int64_t> returns_of(const amqp::basic_properties& props) {
    return amqp::wire::integer_header(props, "x-delivery-count");
}

bool near_delivery_limit(std::uint32_t limit, std::optional<std::int64_t> returns) noexcept {
    const std::int64_t count = returns.value_or(0);
    return count + 1 >= static_cast<std::int64_t>(limit) || count >= renewal_threshold(limit);
}

std::int64_t renewal_threshold(std::uint32_t limit) noexcept {
    const std::int64_t l = limit;
    return std::max<std::int64_t>(l - std::max<std::int64_t>(1, l / 4), 1);
}

bool renew_at_admission(std::uint32_t limit, std::optional<std::int64_t> returns) noexcept {
    return returns.value_or(0) >= renewal_threshold(limit);
}

}  // namespace tarry::detail
