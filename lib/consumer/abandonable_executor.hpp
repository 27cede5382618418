// An executor that forwards to another until its run is abandoned, and
// from then on runs nothing: a coroutine spawned on it that would resume
// afterwards is destroyed instead (the function that would resume it is
// dropped, and with it the coroutine's frames). The consumer spawns each
// asynchronous handler on one of these, so that a coroutine abandoned at
// stop() never runs again once stop() has returned, whatever it awaits.
//
// Threads: as the inner executor's; `gone` is read on every execute and set
// from any thread.
#pragma once

#include <boost/asio/execution.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/require.hpp>

#include <atomic>
#include <memory>
#include <type_traits>
#include <utility>

namespace tarry::detail {

template <class Inner>
class abandonable_executor {
public:
    abandonable_executor(Inner inner, std::shared_ptr<const std::atomic<bool>> gone) noexcept
        : inner_(std::move(inner)), gone_(std::move(gone)) {}

    template <class Property>
    auto query(const Property& p) const noexcept(noexcept(boost::asio::query(std::declval<const Inner&>(), p)))
        -> decltype(boost::asio::query(std::declval<const Inner&>(), p)) {
        return boost::asio::query(inner_, p);
    }

    template <class Property>
    auto require(const Property& p) const
        -> abandonable_executor<std::decay_t<decltype(boost::asio::require(std::declval<const Inner&>(), p))>> {
        return {boost::asio::require(inner_, p), gone_};
    }

    template <class Property>
    auto prefer(const Property& p) const
        -> abandonable_executor<std::decay_t<decltype(boost::asio::prefer(std::declval<const Inner&>(), p))>> {
        return {boost::asio::prefer(inner_, p), gone_};
    }

    template <class F>
    void execute(F&& f) const {
        if (gone_->load(std::memory_order_acquire)) return;  // f, never run, is destroyed by its owner
        inner_.execute(std::forward<F>(f));
    }

    friend bool operator==(const abandonable_executor& a, const abandonable_executor& b) noexcept {
        return a.inner_ == b.inner_ && a.gone_ == b.gone_;
    }
    friend bool operator!=(const abandonable_executor& a, const abandonable_executor& b) noexcept {
        return !(a == b);
    }

private:
    template <class>
    friend class abandonable_executor;

    Inner inner_;
    std::shared_ptr<const std::atomic<bool>> gone_;
};

}  // namespace tarry::detail
