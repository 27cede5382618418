// Hooks whose exceptions are counted and told (see the header).
#include "hook_calls.hpp"

#include "tarry/schedule/worker_pool.hpp"  // exception_text

#include <string>
#include <string_view>

namespace tarry::detail {

namespace {

// Where a hook's exception goes: the counter, then the log sink.
struct hook_failures {
    std::shared_ptr<core_counters> counters;
    std::function<void(const std::string&)> log;  // the user's on_connection, not wrapped

    void record(std::string_view hook, const std::exception_ptr& e) const noexcept {
        ++counters->hook_exceptions;
        if (!log) return;
        try {
            log("the " + std::string(hook) + " hook threw: " + exception_text(e) + " (counted; the consumer goes on)");
        } catch (...) {
            ++counters->hook_exceptions;  // the log sink threw too: counted, nowhere else to tell
        }
    }
    template <class F>
    void call(std::string_view hook, F&& f) const noexcept {
        try {
            f();
        } catch (...) {
            record(hook, std::current_exception());
        }
    }
};

}  // namespace

consumer_hooks guarded(consumer_hooks hooks, std::shared_ptr<core_counters> counters) {
    auto failures = std::make_shared<const hook_failures>(hook_failures{counters, hooks.on_connection});
    if (hooks.on_event)
        hooks.on_event = [failures, hook = std::move(hooks.on_event)](const job_event& e) {
            failures->call("on_event", [&] { hook(e); });
        };
    if (hooks.on_connection_event)
        hooks.on_connection_event = [failures, hook = std::move(hooks.on_connection_event)](const connection_event& e) {
            failures->call("on_connection_event", [&] { hook(e); });
        };
    if (hooks.on_connection)
        hooks.on_connection = [counters, hook = std::move(hooks.on_connection)](const std::string& line) {
            try {
                hook(line);
            } catch (...) {
                ++counters->hook_exceptions;  // the log sink itself: nowhere else to tell
            }
        };
    return hooks;
}

std::function<bool(const std::exception_ptr&)> guarded(std::function<bool(const std::exception_ptr&)> is_permanent,
                                                      std::shared_ptr<core_counters> counters,
                                                      std::function<void(const std::string&)> log) {
    if (!is_permanent) return is_permanent;
    auto failures = std::make_shared<const hook_failures>(hook_failures{std::move(counters), std::move(log)});
    return [failures, hook = std::move(is_permanent)](const std::exception_ptr& e) {
        bool permanent = false;
        failures->call("is_permanent", [&] { permanent = hook(e); });
        return permanent;
    };
}

}  // namespace tarry::detail
