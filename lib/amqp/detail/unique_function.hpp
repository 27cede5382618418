// A move-only std::function (C++20 has none): holds completion handlers,
// which Asio makes move-only.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace tarry::amqp::detail {

template <class Sig>
class unique_function;

template <class R, class... Args>
class unique_function<R(Args...)> {
public:
    unique_function() = default;
    template <class F>
        requires(!std::is_same_v<std::decay_t<F>, unique_function> &&
                 std::is_invocable_r_v<R, std::decay_t<F>&, Args...>)
    unique_function(F&& f) : impl_(std::make_unique<model<std::decay_t<F>>>(std::forward<F>(f))) {}

    explicit operator bool() const noexcept { return impl_ != nullptr; }
    R operator()(Args... args) { return impl_->call(std::forward<Args>(args)...); }

private:
    struct concept_ {
        virtual ~concept_() = default;
        virtual R call(Args... args) = 0;
    };
    template <class F>
    struct model final : concept_ {
        explicit model(F&& f) : f_(std::move(f)) {}
        explicit model(const F& f) : f_(f) {}
        R call(Args... args) override { return f_(std::forward<Args>(args)...); }
        F f_;
    };
    std::unique_ptr<concept_> impl_;
};

}  // namespace tarry::amqp::detail
