// Reading the soak's input lines (see soak_events.hpp).
#include "soak_events.hpp"

#include "tarry/time/epoch_text.hpp"

#include <charconv>
#include <cstdio>

namespace soak {

namespace {

constexpr std::string_view id_prefix = "soak-";

std::optional<std::uint64_t> read_count(std::string_view s) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return n;
}

/// The raw value of "key": in a flat JSON object of echo_worker: a string's
/// contents (no escapes are expected in the soak's ids and events) or a
/// number's text.
std::optional<std::string_view> field(std::string_view line, std::string_view key) {
    const std::string pattern = "\"" + std::string(key) + "\":";
    const auto at = line.find(pattern);
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = line.substr(at + pattern.size());
    if (!rest.empty() && rest.front() == '"') {
        rest.remove_prefix(1);
        const auto close = rest.find('"');
        if (close == std::string_view::npos) return std::nullopt;
        return rest.substr(0, close);
    }
    const auto end = rest.find_first_of(",}");
    if (end == std::string_view::npos) return std::nullopt;
    return rest.substr(0, end);
}

}  // namespace

std::string job_id(std::uint64_t n) { return std::string(id_prefix) + std::to_string(n); }

std::optional<std::uint64_t> job_number(std::string_view id) {
    if (id.substr(0, id_prefix.size()) != id_prefix) return std::nullopt;
    return read_count(id.substr(id_prefix.size()));
}

std::optional<micros> read_epoch(std::string_view text) {
    const auto dot = text.find('.');
    const auto whole = read_count(text.substr(0, dot));
    if (!whole) return std::nullopt;
    micros fraction = 0;
    if (dot != std::string_view::npos) {
        const std::string_view digits = text.substr(dot + 1);
        if (digits.empty() || digits.size() > 6) return std::nullopt;
        const auto f = read_count(digits);
        if (!f) return std::nullopt;
        fraction = static_cast<micros>(*f);
        for (std::size_t i = digits.size(); i < 6; ++i) fraction *= 10;
    }
    return static_cast<micros>(*whole) * 1'000'000 + fraction;
}

std::optional<worker_event> read_event(std::string_view line) {
    const auto event = field(line, "event");
    const auto id = field(line, "id");
    const auto due = field(line, "due");
    const auto at = field(line, "at");
    const auto attempt = field(line, "attempt");
    if (line.empty() || line.back() != '}') return std::nullopt;
    if (!event || !id || !due || !at || !attempt) return std::nullopt;
    worker_event e;
    e.event = std::string(*event);
    e.job = job_number(*id);
    const auto d = read_epoch(*due), a = read_epoch(*at);
    const auto n = read_count(*attempt);
    if (!d || !a || !n) return std::nullopt;
    e.due = *d;
    e.at = *a;
    e.attempt = static_cast<std::uint32_t>(*n);
    return e;
}

std::optional<published_job> read_published(std::string_view line) {
    const auto first = line.find(' ');
    const auto second = line.find(' ', first == std::string_view::npos ? first : first + 1);
    if (first == std::string_view::npos || second == std::string_view::npos) return std::nullopt;
    const auto n = read_count(line.substr(0, first));
    const auto due = read_epoch(line.substr(first + 1, second - first - 1));
    const auto fails = read_count(line.substr(second + 1));
    if (!n || !due || !fails) return std::nullopt;
    return published_job{*n, *due, static_cast<std::uint32_t>(*fails)};
}

std::string published_line(const published_job& j) {
    return std::to_string(j.number) + ' ' + tarry::epoch_seconds_text(tarry::wall_time(std::chrono::microseconds(j.due))) + ' ' + std::to_string(j.fails);
}

}  // namespace soak
