// The periodic layer's error category.
#include "tarry/periodic/error.hpp"

namespace tarry::periodic {
namespace {

class periodic_category_impl final : public std::error_category {
public:
    const char* name() const noexcept override { return "tarry.periodic"; }
    std::string message(int value) const override {
        switch (static_cast<errc>(value)) {
        case errc::invalid_cron: return "invalid cron expression";
        case errc::unknown_time_zone: return "unknown time zone";
        case errc::invalid_schedule: return "invalid schedule";
        }
        return "unknown periodic error " + std::to_string(value);
    }
};

}  // namespace

const std::error_category& periodic_category() noexcept {
    static const periodic_category_impl category;
    return category;
}

}  // namespace tarry::periodic
