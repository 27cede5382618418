// Where held jobs wait for their due time and workers take them: the core
// puts jobs in and takes them back out; worker threads pop due jobs
// concurrently. Whatever a worker popped is the worker's; whatever the core
// took out is the core's: the store decides, under its lock.
//
// delay_queue_store adapts tarry::delay_queue (thread-safe) for the driver
// and for the core's unit tests (on a fake clock).
#pragma once

#include "held_job.hpp"

#include "tarry/schedule/delay_queue.hpp"

#include <functional>
#include <optional>
#include <vector>

namespace tarry::detail {

using held_item = due_item<held_job>;

class job_store {
public:
    virtual ~job_store() = default;
    /// Holds j until `due` (steady). False when the store is closed
    /// (stopping): j is left with the caller.
    virtual bool hold(held_job&& j, steady_time due, std::size_t bytes) = 0;
    /// Hands j, due already, to the next worker; workers are woken by
    /// wake(). False as for hold().
    virtual bool ready(held_job&& j, steady_time due, std::size_t bytes) = 0;
    /// The job due last, taken out.
    virtual std::optional<held_item> take_latest() = 0;
    virtual std::optional<steady_time> latest_due() const = 0;
    virtual std::optional<steady_time> earliest_due() const = 0;
    /// Every job for which `pred` is true, taken out in one pass.
    virtual std::vector<held_item> take_if(const std::function<bool(const held_job&)>& pred) = 0;
    virtual std::size_t size() const = 0;
    virtual std::size_t bytes() const = 0;
    /// Of size(), the jobs handed to the workers by ready() and not yet taken.
    virtual std::size_t ready_waiting() const = 0;
};

template <class Clock>
class delay_queue_store final : public job_store {
public:
    explicit delay_queue_store(delay_queue<held_job, Clock>& q) : q_(q) {}
    bool hold(held_job&& j, steady_time due, std::size_t bytes) override {
        return q_.push(std::move(j), due, bytes) == push_result::ok;
    }
    bool ready(held_job&& j, steady_time due, std::size_t bytes) override {
        return q_.push_ready_quiet(std::move(j), due, bytes) == push_result::ok;
    }
    std::optional<held_item> take_latest() override { return q_.take_latest(); }
    std::optional<steady_time> latest_due() const override { return q_.latest_due(); }
    std::optional<steady_time> earliest_due() const override { return q_.earliest_due(); }
    std::vector<held_item> take_if(const std::function<bool(const held_job&)>& pred) override {
        return q_.remove_if(pred);
    }
    std::size_t size() const override { return q_.size(); }
    std::size_t bytes() const override { return q_.bytes(); }
    std::size_t ready_waiting() const override { return q_.ready_size(); }

private:
    delay_queue<held_job, Clock>& q_;
};

}  // namespace tarry::detail
