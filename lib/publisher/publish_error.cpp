// The "tarry.publish" error category.
#include "tarry/publisher/publish_error.hpp"

#include <string>

namespace tarry {

namespace {
class publish_category_impl final : public std::error_category {
public:
    const char* name() const noexcept override { return "tarry.publish"; }
    std::string message(int c) const override {
        switch (static_cast<publish_errc>(c)) {
            case publish_errc::delay_exceeds_max:
                return "the job is scheduled further out than max_delay; nothing was sent";
            case publish_errc::unroutable:
                return "no queue took the message (basic.return): the exchange has no binding for "
                       "the routing key, or the queue does not exist";
            case publish_errc::invalid_schedule:
                return "the due time is before 1970, past the range of the clock, or not a "
                       "number; nothing was sent";
            case publish_errc::confirm_timeout:
                return "the broker did not confirm the publish in time; the message may still have "
                       "been taken, and its channel was closed";
        }
        return "unknown publish error " + std::to_string(c);
    }
};
}  // namespace

const std::error_category& publish_category() noexcept {
    static const publish_category_impl category;
    return category;
}

}  // namespace tarry
