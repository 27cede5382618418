// How tarry's asynchronous operations complete, and what is behind their
// `diagnostics&` overloads.
//
// Every operation runs with an op_handler: the caller's completion handler
// (type-erased) and, for a `diagnostics&` overload, where that operation's
// diagnostics go. The operation completes it once, through complete(),
// with its failure record (an empty code on success): the diagnostics are
// written on the handler's own executor just before the handler runs, so
// the handler reads them without a lock. Nothing else ever writes there.
//
// A `diagnostics&` overload is the plain operation with its token wrapped
// by with_diagnostics(diag, token); the wrapper's async_result hands the
// operation an op_handler that knows where `diag` is. The operations are
// written once, for op_handler; both overloads share them.
//
// Not part of the API: use the overloads (channel.hpp, connection.hpp,
// tarry/publisher/publisher.hpp).
#pragma once

#include "tarry/amqp/error.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/dispatch.hpp>

#include <system_error>
#include <type_traits>
#include <utility>

namespace tarry::amqp::detail {

/// A completion handler of `void(std::error_code, Args...)`, and where the
/// operation's diagnostics go (nowhere for the plain overloads).
template <class... Args>
class op_handler {
public:
    using handler_type = boost::asio::any_completion_handler<void(std::error_code, Args...)>;
    /// The caller's cancellation slot: Asio finds it through this.
    using cancellation_slot_type = boost::asio::cancellation_slot;

    op_handler() = default;
    /// Any completion handler of the signature (implicit: the plain
    /// overloads' initiations take one directly); no diagnostics.
    template <class Handler>
        requires(!std::is_same_v<std::remove_cvref_t<Handler>, op_handler>)
    op_handler(Handler&& h) : handler_(std::forward<Handler>(h)) {}
    /// A handler whose operation writes its diagnostics to `*sink`.
    op_handler(handler_type h, diagnostics* sink) : handler_(std::move(h)), sink_(sink) {}

    explicit operator bool() const noexcept { return static_cast<bool>(handler_); }
    cancellation_slot_type get_cancellation_slot() const noexcept {
        return handler_.get_cancellation_slot();
    }

    /// Completes the operation with `why` (an empty code: success) and
    /// `values`, through the handler's associated executor (`fallback` when
    /// it has none; inline when already there): the diagnostics are
    /// written first, then the handler runs with why.code.
    template <class Executor>
    void complete(const Executor& fallback, diagnostics why, Args... values) && {
        auto ex = boost::asio::get_associated_executor(handler_, fallback);
        boost::asio::dispatch(ex, [h = std::move(handler_), sink = sink_, why = std::move(why),
                                   ... v = std::move(values)]() mutable {
            const std::error_code ec = why.code;
            if (sink) *sink = std::move(why);
            std::move(h)(ec, std::move(v)...);
        });
    }

private:
    handler_type handler_;
    diagnostics* sink_ = nullptr;
};

/// The completion token of a `diagnostics&` overload: the caller's token,
/// and where the operation's diagnostics go.
template <class Token>
struct diagnostics_token {
    diagnostics* sink;
    Token token;
};

template <class Token>
diagnostics_token<std::decay_t<Token>> with_diagnostics(diagnostics& diag, Token&& token) {
    return {&diag, std::forward<Token>(token)};
}

}  // namespace tarry::amqp::detail

/// Initiates the operation with the caller's own token, handing it an
/// op_handler that writes to the sink.
template <class Token, class... Args>
struct boost::asio::async_result<tarry::amqp::detail::diagnostics_token<Token>,
                                 void(std::error_code, Args...)> {
    template <class Initiation, class RawToken, class... InitArgs>
    static auto initiate(Initiation&& init, RawToken&& token, InitArgs&&... args) {
        return boost::asio::async_initiate<Token, void(std::error_code, Args...)>(
            [init = std::forward<Initiation>(init), sink = token.sink](auto&& handler,
                                                                       auto&&... a) mutable {
                std::move(init)(tarry::amqp::detail::op_handler<Args...>(
                                    std::forward<decltype(handler)>(handler), sink),
                                std::forward<decltype(a)>(a)...);
            },
            token.token, std::forward<InitArgs>(args)...);
    }
};
