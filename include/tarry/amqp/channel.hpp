// An AMQP channel: a cheap, copyable handle to one channel of a connection.
//
// Get one from connection::async_open_channel. Every operation takes an
// Asio completion token (a callback, boost::asio::use_future,
// boost::asio::use_awaitable, deferred, ...) and:
//  - may be started from any thread: it is posted to the connection's I/O
//    thread; the completion handler is never invoked from inside the
//    starting call;
//  - completes exactly once: with the broker's answer, or with an error
//    when the channel or connection fails first. A broker channel.close
//    (404, 406, ...) fails the channel's pending operations with that reply
//    code (broker_category()) and leaves the connection and other channels
//    working;
//  - supports per-operation cancellation through the token's cancellation
//    slot (e.g. boost::asio::bind_cancellation_slot): the operation
//    completes at once with errc::operation_cancelled; what was sent stays
//    sent, so the broker may still act on it. Emit cancellation from the
//    connection's I/O thread.
// Errors are std::error_code values in the signature, never exceptions:
// with use_future an operation yields std::future<std::error_code> or
// std::future<std::tuple<std::error_code, T>>, and co_await with
// use_awaitable yields the same error_code or tuple.
// Why an operation failed: every operation has an overload taking a
// `diagnostics& diag` before the token, e.g.
//     ch.async_declare_queue(opts, diag, token);
// When its handler runs, `diag` holds that operation's failure and nothing
// else: the code, one line that names the operation and says why (e.g.
// "queue.declare: the broker closed channel 1: 404 NOT_FOUND - no queue
// 'jobs' in vhost '/' (in queue.declare)"), and the broker's reply when the
// broker closed the channel or the connection while the operation was
// pending; on success it is cleared. The rule for the reply: a channel
// (each channel a number is opened as) and a connection close once, so the
// close that failed a pending operation is the one it carries; operations
// pending behind the one that caused the close carry the same reply (its
// method names the cause), and an operation started on a channel already
// closed carries none (errc::channel_closed). `diag` is written on the
// handler's executor just before the handler runs: keep it alive, and do
// not touch it, until then. last_error() is only the latest failure, for
// logs.
// Synchronous requests of a channel are sent one at a time, in the order
// started; publishes, acks and other frames started after a request wait
// behind it, so order is always kept. A handle outlives its channel
// harmlessly: after close, or once the connection is lost or reconnected,
// its operations fail with errc::channel_closed / not_connected.
#pragma once

#include "tarry/amqp/channel_options.hpp"
#include "tarry/amqp/completion.hpp"
#include "tarry/amqp/error.hpp"
#include "tarry/amqp/message.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace tarry::amqp {

namespace detail {
struct channel_shared;
class connection_impl;
}

/// A cheap, copyable handle to one channel of a connection: operations
/// start from any thread, complete exactly once with a std::error_code,
/// and a handle outlives its channel harmlessly (see this header's opening
/// comment).
class channel {
public:
    /// A type-erased completion handler of `void(std::error_code, Args...)`.
    template <class... Args>
    using handler = boost::asio::any_completion_handler<void(std::error_code, Args...)>;

    /// A handle to no channel: every operation fails with channel_closed.
    channel() = default;

    /// The channel number (0 for a default-constructed handle).
    std::uint16_t number() const noexcept;
    /// True until the channel is closed (by us, by the broker, or with the
    /// connection). Thread-safe; a snapshot.
    bool is_open() const noexcept;
    /// The latest failure on this channel: why it closed, or the latest
    /// operation error with a detail (such as invalid_argument). Empty code
    /// while nothing went wrong. Thread-safe; a snapshot, for logs only:
    /// another failure may replace it at any time, so it is not how to learn
    /// why an operation failed: give that operation a `diagnostics&` (the
    /// overloads below).
    diagnostics last_error() const;
    /// Publishes awaiting a confirm (0 unless in confirm mode). Thread-safe; a snapshot.
    std::size_t unconfirmed() const noexcept;

    // ---- exchanges ------------------------------------------------------------
    /// exchange.declare → void(error_code)
    template <class Token>
    auto async_declare_exchange(exchange_options o, Token&& token) const {
        return initiate<>(token, [s = *this](completion<> h, exchange_options o) {
            s.declare_exchange_(std::move(o), std::move(h));
        }, std::move(o));
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_declare_exchange(exchange_options o, diagnostics& diag, Token&& token) const {
        return async_declare_exchange(std::move(o),
                                      detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// exchange.delete → void(error_code)
    template <class Token>
    auto async_delete_exchange(std::string name, exchange_delete_options o, Token&& token) const {
        return initiate<>(token,
                          [s = *this](completion<> h, std::string n, exchange_delete_options o) {
                              s.delete_exchange_(std::move(n), o.if_unused, std::move(h));
                          },
                          std::move(name), o);
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_delete_exchange(std::string name, exchange_delete_options o, diagnostics& diag,
                               Token&& token) const {
        return async_delete_exchange(std::move(name), o,
                                     detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// exchange.bind (destination ← source) → void(error_code)
    template <class Token>
    auto async_bind_exchange(std::string destination, std::string source, std::string routing_key,
                             field_table arguments, Token&& token) const {
        return initiate<>(token, [s = *this](completion<> h, std::string d, std::string src,
                                             std::string k, field_table a) {
            s.bind_exchange_(true, std::move(d), std::move(src), std::move(k), std::move(a),
                             std::move(h));
        }, std::move(destination), std::move(source), std::move(routing_key), std::move(arguments));
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_bind_exchange(std::string destination, std::string source, std::string routing_key,
                             field_table arguments, diagnostics& diag, Token&& token) const {
        return async_bind_exchange(std::move(destination), std::move(source),
                                   std::move(routing_key), std::move(arguments),
                                   detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// exchange.unbind → void(error_code)
    template <class Token>
    auto async_unbind_exchange(std::string destination, std::string source,
                               std::string routing_key, field_table arguments,
                               Token&& token) const {
        return initiate<>(token, [s = *this](completion<> h, std::string d, std::string src,
                                             std::string k, field_table a) {
            s.bind_exchange_(false, std::move(d), std::move(src), std::move(k), std::move(a),
                             std::move(h));
        }, std::move(destination), std::move(source), std::move(routing_key), std::move(arguments));
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_unbind_exchange(std::string destination, std::string source, std::string routing_key,
                               field_table arguments, diagnostics& diag, Token&& token) const {
        return async_unbind_exchange(std::move(destination), std::move(source),
                                     std::move(routing_key), std::move(arguments),
                                     detail::with_diagnostics(diag, std::forward<Token>(token)));
    }

    // ---- queues ---------------------------------------------------------------
    /// queue.declare → void(error_code, queue_info)
    template <class Token>
    auto async_declare_queue(queue_options o, Token&& token) const {
        return initiate<queue_info>(token, [s = *this](completion<queue_info> h, queue_options o) {
            s.declare_queue_(std::move(o), std::move(h));
        }, std::move(o));
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_declare_queue(queue_options o, diagnostics& diag, Token&& token) const {
        return async_declare_queue(std::move(o),
                                   detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// queue.delete → void(error_code, messages deleted)
    template <class Token>
    auto async_delete_queue(std::string name, queue_delete_options o, Token&& token) const {
        return initiate<std::uint32_t>(token, [s = *this](completion<std::uint32_t> h,
                                                          std::string n, queue_delete_options o) {
            s.delete_queue_(std::move(n), o, std::move(h));
        }, std::move(name), o);
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_delete_queue(std::string name, queue_delete_options o, diagnostics& diag,
                            Token&& token) const {
        return async_delete_queue(std::move(name), o,
                                  detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// queue.bind → void(error_code)
    template <class Token>
    auto async_bind_queue(std::string queue, std::string exchange, std::string routing_key,
                          field_table arguments, Token&& token) const {
        return initiate<>(token, [s = *this](completion<> h, std::string q, std::string x,
                                             std::string k, field_table a) {
            s.bind_queue_(true, std::move(q), std::move(x), std::move(k), std::move(a),
                          std::move(h));
        }, std::move(queue), std::move(exchange), std::move(routing_key), std::move(arguments));
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_bind_queue(std::string queue, std::string exchange, std::string routing_key,
                          field_table arguments, diagnostics& diag, Token&& token) const {
        return async_bind_queue(std::move(queue), std::move(exchange), std::move(routing_key),
                                std::move(arguments),
                                detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// queue.unbind → void(error_code)
    template <class Token>
    auto async_unbind_queue(std::string queue, std::string exchange, std::string routing_key,
                            field_table arguments, Token&& token) const {
        return initiate<>(token, [s = *this](completion<> h, std::string q, std::string x,
                                             std::string k, field_table a) {
            s.bind_queue_(false, std::move(q), std::move(x), std::move(k), std::move(a),
                          std::move(h));
        }, std::move(queue), std::move(exchange), std::move(routing_key), std::move(arguments));
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_unbind_queue(std::string queue, std::string exchange, std::string routing_key,
                            field_table arguments, diagnostics& diag, Token&& token) const {
        return async_unbind_queue(std::move(queue), std::move(exchange), std::move(routing_key),
                                  std::move(arguments),
                                  detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// queue.purge → void(error_code, messages purged)
    template <class Token>
    auto async_purge_queue(std::string name, Token&& token) const {
        return initiate<std::uint32_t>(token,
                                       [s = *this](completion<std::uint32_t> h, std::string n) {
                                           s.purge_queue_(std::move(n), std::move(h));
                                       },
                                       std::move(name));
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_purge_queue(std::string name, diagnostics& diag, Token&& token) const {
        return async_purge_queue(std::move(name),
                                 detail::with_diagnostics(diag, std::forward<Token>(token)));
    }

    // ---- consuming ----------------------------------------------------------------
    /// basic.qos → void(error_code)
    template <class Token>
    auto async_qos(qos_options o, Token&& token) const {
        return initiate<>(token, [s = *this](completion<> h, qos_options o) {
            s.qos_(o, std::move(h));
        }, o);
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_qos(qos_options o, diagnostics& diag, Token&& token) const {
        return async_qos(o, detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// basic.consume → void(error_code, consumer tag). Deliveries go to
    /// `handlers` on the I/O thread from then on (see consumer_handlers).
    template <class Token>
    auto async_consume(consume_options o, consumer_handlers handlers, Token&& token) const {
        return initiate<std::string>(token, [s = *this](completion<std::string> h,
                                                        consume_options o, consumer_handlers c) {
            s.consume_(std::move(o), std::move(c), std::move(h));
        }, std::move(o), std::move(handlers));
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_consume(consume_options o, consumer_handlers handlers, diagnostics& diag,
                       Token&& token) const {
        return async_consume(std::move(o), std::move(handlers),
                             detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// basic.cancel → void(error_code). No delivery reaches the consumer
    /// after this completes.
    template <class Token>
    auto async_cancel(std::string consumer_tag, Token&& token) const {
        return initiate<>(token, [s = *this](completion<> h, std::string t) {
            s.cancel_(std::move(t), std::move(h));
        }, std::move(consumer_tag));
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_cancel(std::string consumer_tag, diagnostics& diag, Token&& token) const {
        return async_cancel(std::move(consumer_tag),
                            detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// basic.get → void(error_code, the message or nothing when the queue is empty)
    template <class Token>
    auto async_get(std::string queue, get_options o, Token&& token) const {
        return initiate<std::optional<get_result>>(
            token,
            [s = *this](completion<std::optional<get_result>> h, std::string q, get_options o) {
                s.get_(std::move(q), o.no_ack, std::move(h));
            },
            std::move(queue), o);
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_get(std::string queue, get_options o, diagnostics& diag, Token&& token) const {
        return async_get(std::move(queue), o,
                         detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// basic.ack → void(error_code): done once handed to the socket (the
    /// broker does not answer; so are nack and reject).
    template <class Token>
    auto async_ack(std::uint64_t delivery_tag, ack_options o, Token&& token) const {
        return initiate<>(token, [s = *this](completion<> h, std::uint64_t t, ack_options o) {
            s.ack_(t, o.multiple, std::move(h));
        }, delivery_tag, o);
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_ack(std::uint64_t delivery_tag, ack_options o, diagnostics& diag,
                   Token&& token) const {
        return async_ack(delivery_tag, o,
                         detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// basic.nack → void(error_code). With {} the message goes back to its
    /// queue; {.requeue = false} dead-letters (or drops) it.
    template <class Token>
    auto async_nack(std::uint64_t delivery_tag, nack_options o, Token&& token) const {
        return initiate<>(token, [s = *this](completion<> h, std::uint64_t t, nack_options o) {
            s.nack_(t, o.multiple, o.requeue, std::move(h));
        }, delivery_tag, o);
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_nack(std::uint64_t delivery_tag, nack_options o, diagnostics& diag,
                    Token&& token) const {
        return async_nack(delivery_tag, o,
                          detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// basic.reject → void(error_code): nack of one message.
    template <class Token>
    auto async_reject(std::uint64_t delivery_tag, reject_options o, Token&& token) const {
        return initiate<>(token, [s = *this](completion<> h, std::uint64_t t, reject_options o) {
            s.reject_(t, o.requeue, std::move(h));
        }, delivery_tag, o);
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_reject(std::uint64_t delivery_tag, reject_options o, diagnostics& diag,
                      Token&& token) const {
        return async_reject(delivery_tag, o,
                            detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// basic.recover → void(error_code): redeliver every unacknowledged
    /// delivery of the channel.
    template <class Token>
    auto async_recover(recover_options o, Token&& token) const {
        return initiate<>(token, [s = *this](completion<> h, recover_options o) {
            s.recover_(o.requeue, std::move(h));
        }, o);
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_recover(recover_options o, diagnostics& diag, Token&& token) const {
        return async_recover(o, detail::with_diagnostics(diag, std::forward<Token>(token)));
    }

    // ---- publishing ------------------------------------------------------------
    /// confirm.select → void(error_code). Afterwards every publish completes
    /// only when the broker confirms it.
    template <class Token>
    auto async_confirm_select(Token&& token) const {
        return initiate<>(token, [s = *this](completion<> h) { s.confirm_select_(std::move(h)); });
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_confirm_select(diagnostics& diag, Token&& token) const {
        return async_confirm_select(detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// basic.publish → void(error_code). The frames are encoded on the
    /// calling thread (the message is not kept). Without confirm mode it
    /// completes once queued for the socket; in confirm mode with the
    /// broker's ack (success) or nack (errc::publish_nacked). A mandatory
    /// message nobody takes also comes back to the return handler. Refused
    /// before anything is sent: errc::header_too_large when the properties
    /// do not fit one frame of the connection's frame_max (the broker would
    /// close the connection), errc::invalid_argument for other values the
    /// wire cannot carry (a shortstr over 255 bytes, ...).
    template <class Token>
    auto async_publish(std::string_view exchange, std::string_view routing_key, const message& msg,
                       publish_options o, Token&& token) const {
        auto frames = encode_publish_(exchange, routing_key, msg, o);
        return initiate<>(token, [s = *this](completion<> h, encoded_publish f) {
            s.publish_(std::move(f), std::move(h));
        }, std::move(frames));
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_publish(std::string_view exchange, std::string_view routing_key, const message& msg,
                       publish_options o, diagnostics& diag, Token&& token) const {
        return async_publish(exchange, routing_key, msg, o,
                             detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// channel.flow → void(error_code, active). RabbitMQ refuses active=false
    /// with a connection error (540); use qos to slow consumers instead.
    template <class Token>
    auto async_flow(bool active, Token&& token) const {
        return initiate<bool>(token, [s = *this](completion<bool> h, bool a) {
            s.flow_(a, std::move(h));
        }, active);
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_flow(bool active, diagnostics& diag, Token&& token) const {
        return async_flow(active, detail::with_diagnostics(diag, std::forward<Token>(token)));
    }
    /// channel.close → void(error_code). Pending operations of the channel
    /// fail with errc::channel_closed. Closing a closed channel succeeds.
    template <class Token>
    auto async_close(Token&& token) const {
        return initiate<>(token, [s = *this](completion<> h) { s.close_(std::move(h)); });
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_close(diagnostics& diag, Token&& token) const {
        return async_close(detail::with_diagnostics(diag, std::forward<Token>(token)));
    }

    // ---- notifications ---------------------------------------------------------
    /// Where basic.return goes (mandatory messages no queue took). Called on
    /// the I/O thread. Set before publishing; the setting is posted to the
    /// I/O thread, so it applies to returns processed after it.
    void set_return_handler(std::function<void(returned_message)> f) const;
    /// Called once on the I/O thread when the channel closes for any reason
    /// (diagnostics say why; code errc::channel_closed for our own close).
    void set_close_handler(std::function<void(const diagnostics&)> f) const;

private:
    friend class detail::connection_impl;  // makes the handles it opens
    explicit channel(std::shared_ptr<detail::channel_shared> s) noexcept : s_(std::move(s)) {}

    /// Frames of one publish, encoded on the caller's thread.
    struct encoded_publish {
        std::vector<std::uint8_t> frames;
        std::error_code error;
        std::string detail;
    };

    /// What each operation runs with: the caller's handler, and where its
    /// diagnostics go (see completion.hpp).
    template <class... Args>
    using completion = detail::op_handler<Args...>;

    template <class... Args, class Token, class Init, class... InitArgs>
    static auto initiate(Token& token, Init init, InitArgs&&... args) {
        return boost::asio::async_initiate<Token, void(std::error_code, Args...)>(
            std::move(init), token, std::forward<InitArgs>(args)...);
    }

    void declare_exchange_(exchange_options o, completion<> h) const;
    void delete_exchange_(std::string name, bool if_unused, completion<> h) const;
    void bind_exchange_(bool bind, std::string d, std::string s, std::string k, field_table a,
                        completion<> h) const;
    void declare_queue_(queue_options o, completion<queue_info> h) const;
    void delete_queue_(std::string name, queue_delete_options o, completion<std::uint32_t> h) const;
    void bind_queue_(bool bind, std::string q, std::string x, std::string k, field_table a,
                     completion<> h) const;
    void purge_queue_(std::string name, completion<std::uint32_t> h) const;
    void qos_(qos_options o, completion<> h) const;
    void consume_(consume_options o, consumer_handlers c, completion<std::string> h) const;
    void cancel_(std::string tag, completion<> h) const;
    void get_(std::string queue, bool no_ack, completion<std::optional<get_result>> h) const;
    void ack_(std::uint64_t tag, bool multiple, completion<> h) const;
    void nack_(std::uint64_t tag, bool multiple, bool requeue, completion<> h) const;
    void reject_(std::uint64_t tag, bool requeue, completion<> h) const;
    void recover_(bool requeue, completion<> h) const;
    void confirm_select_(completion<> h) const;
    encoded_publish encode_publish_(std::string_view exchange, std::string_view routing_key,
                                    const message& msg, publish_options o) const;
    void publish_(encoded_publish f, completion<> h) const;
    void flow_(bool active, completion<bool> h) const;
    void close_(completion<> h) const;

    std::shared_ptr<detail::channel_shared> s_;
};

}  // namespace tarry::amqp
