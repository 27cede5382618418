#include "async_runner.hpp"

#include "abandonable_executor.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>

#include <stdexcept>

// GCC 12 reports Asio's coroutine frame deallocation as mismatched
// (-Wmismatched-new-delete, a known false positive for awaitable frames:
// Asio's frame operator new and delete do match).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace tarry::detail {

namespace asio = boost::asio;

namespace {
// The coroutine spawned for a run: the handler's outcome into `out`. It
// co-owns what it uses (the handler, the run), so that it may outlive the
// consumer when abandoned.
asio::awaitable<void> call(std::shared_ptr<const async_job_handler> handler, std::shared_ptr<job_run> run,
                           std::shared_ptr<std::optional<job_outcome>> out) {
    out->emplace(co_await (*handler)(*run->view));
}
}  // namespace

async_runner::async_runner(asio::any_io_executor io, asio::any_io_executor handler_executor,
                           async_job_handler handler, std::shared_ptr<worker_context> context,
                           std::size_t max_in_flight, source from)
    : io_(io),
      handler_executor_(handler_executor ? std::move(handler_executor) : io),
      handler_(std::make_shared<const async_job_handler>(std::move(handler))),
      context_(std::move(context)),
      max_in_flight_(max_in_flight),
      from_(std::move(from)),
      timer_(io_) {
    if (!*handler_) throw std::invalid_argument("async_runner: the handler is empty");
    if (max_in_flight_ == 0) throw std::invalid_argument("async_runner: max_in_flight must be at least 1");
}

void async_runner::pump() {
    if (pumping_ || closed_) return;  // a run that ended inline: the outer loop goes on
    pumping_ = true;
    while (!closed_ && flights_.size() < max_in_flight_) {
        auto item = from_.take_due();
        if (!item) break;
        start(*item);
    }
    pumping_ = false;
    // Full: the next run that ends pumps again. Otherwise wake when the
    // earliest held job falls due.
    if (!closed_ && flights_.size() < max_in_flight_) arm(from_.earliest_due());
}

void async_runner::start(held_item& item) {
    auto run = std::make_shared<job_run>();
    if (!context_->begin(item, *run)) return;  // handed back unrun
    const std::uint64_t id = ++last_id_;
    flight f{std::make_shared<asio::cancellation_signal>(), std::make_shared<std::atomic<bool>>(false)};
    flights_.emplace(id, f);
    in_flight_.store(flights_.size(), std::memory_order_relaxed);
    auto out = std::make_shared<std::optional<job_outcome>>();
    abandonable_executor<asio::any_io_executor> on(handler_executor_, f.gone);
    asio::co_spawn(
        on, call(handler_, run, out),
        asio::bind_cancellation_slot(
            f.signal->slot(),
            asio::bind_executor(io_, [w = weak_from_this(), context = context_, run, out, id,
                                      signal = f.signal](std::exception_ptr e) {
                job_outcome outcome = e || !*out ? context->outcome_of(e) : std::move(**out);
                context->end(*run, std::move(outcome));  // discarded when abandoned
                if (auto s = w.lock()) s->landed(id);
            })));
}

void async_runner::landed(std::uint64_t id) {
    if (flights_.erase(id) == 0) return;  // abandoned: no longer counted
    in_flight_.store(flights_.size(), std::memory_order_relaxed);
    pump();
}

void async_runner::arm(std::optional<steady_time> at) {
    // Re-armed only for an earlier wake; a wake that finds nothing due arms
    // again. The delay is counted on the store's clock.
    if (!at || (timer_at_ && *timer_at_ <= *at)) return;
    timer_at_ = at;
    timer_.expires_after(std::max(*at - from_.now(), steady_time::duration::zero()));
    timer_.async_wait([w = weak_from_this()](boost::system::error_code ec) {
        auto s = w.lock();
        if (!s || ec) return;
        s->timer_at_.reset();
        s->pump();
    });
}

void async_runner::close() {
    closed_ = true;
    timer_.cancel();
    timer_at_.reset();
}

std::size_t async_runner::cancel_running(wall_time now) {
    closed_ = true;
    const std::size_t n = context_->abandon_running(now);
    for (auto& [id, f] : flights_) {
        abandoned_.push_back(f.gone);
        // Emitted where the coroutine runs: a cancellation signal is not
        // thread-safe.
        asio::post(handler_executor_, [signal = f.signal] { signal->emit(asio::cancellation_type::terminal); });
    }
    flights_.clear();
    in_flight_.store(0, std::memory_order_relaxed);
    return n;
}

void async_runner::let_go() {
    for (auto& gone : abandoned_) gone->store(true, std::memory_order_release);
    abandoned_.clear();
}

}  // namespace tarry::detail
