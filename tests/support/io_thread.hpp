// Test helpers: an io_context running on its own thread for the duration
// of a test (the AMQP connection's "I/O thread").
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>

namespace tarry_test {

class io_thread {
public:
    io_thread() : guard_(ctx_.get_executor()), thread_([this] { ctx_.run(); }) {}
    ~io_thread() {
        guard_.reset();
        // Give pending closes a moment, then stop whatever is left.
        if (thread_.joinable()) {
            auto done = std::async(std::launch::async, [this] { thread_.join(); });
            if (done.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
                ctx_.stop();
                done.wait();
            }
        }
    }
    io_thread(const io_thread&) = delete;
    io_thread& operator=(const io_thread&) = delete;

    boost::asio::io_context& context() noexcept { return ctx_; }
    boost::asio::io_context::executor_type executor() noexcept { return ctx_.get_executor(); }

private:
    boost::asio::io_context ctx_;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
    std::thread thread_;
};

/// The value of a future, or a thrown error after `timeout` (a test must
/// never hang).
template <class T>
T get_within(std::future<T>& f, std::chrono::milliseconds timeout, const char* what = "operation") {
    if (f.wait_for(timeout) != std::future_status::ready) {
        throw std::runtime_error(std::string(what) + " did not complete within " +
                                 std::to_string(timeout.count()) + " ms");
    }
    return f.get();
}

}  // namespace tarry_test
