// The queue's checkpoint stream, `<queue>.tarry.checkpoints`: where
// consumers write checkpoints of the control stream (checkpoint.hpp) and a
// starting consumer finds the newest one (docs/control.md, "Checkpoints").
// It keeps a day: a checkpoint is written at least every 12 hours while a
// consumer runs, so the newest one is always there; when none is (no
// consumer ran for a day), a consumer reads the control stream from its
// first entry, as it would with no checkpoint at all.
// Two asynchronous operations, each on a channel of its own; any thread.
#pragma once

#include "tarry/amqp/completion.hpp"
#include "tarry/amqp/connection.hpp"
#include "tarry/amqp/wire/field_table.hpp"
#include "tarry/control/checkpoint_search.hpp"

#include <boost/asio/async_result.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tarry::control {

/// `<queue>.tarry.checkpoints`.
std::string checkpoint_stream_name(std::string_view queue);

/// How long the broker keeps its entries (x-max-age "1D").
inline constexpr std::chrono::hours checkpoint_stream_max_age{24};

/// The arguments of every active declare: x-queue-type "stream", x-max-age
/// "1D", x-stream-max-segment-size-bytes 8 000 000 (a checkpoint's parts
/// are up to 1 MiB each). Durable.
amqp::wire::field_table checkpoint_stream_arguments();

/// What a search of the checkpoint stream found.
struct checkpoint_found {
    /// The newest complete checkpoint; nothing when there is none (or no
    /// checkpoint stream).
    std::optional<checkpoint_search::result> checkpoint;
    std::string why_none;               ///< for a log line, when there is none
    std::vector<std::string> skipped;   ///< malformed parts met on the way
    std::size_t entries_read = 0;       ///< of the checkpoint stream
};

namespace detail {
void declare_checkpoint_stream(amqp::connection& conn, std::string queue, amqp::detail::op_handler<> h);
void find_checkpoint(amqp::connection& conn, std::string queue, std::chrono::milliseconds timeout,
                     amqp::detail::op_handler<checkpoint_found> h);
}  // namespace detail

/// Declares `queue`'s checkpoint stream (actively, with the arguments
/// above) → void(std::error_code); 406 PRECONDITION_FAILED
/// (amqp::broker_category()) when it exists with other ones. `diag` must
/// outlive the operation; so must `conn`.
template <class Token>
auto async_declare_checkpoint_stream(amqp::connection& conn, std::string queue, amqp::diagnostics& diag,
                                     Token&& token) {
    auto with_diag = amqp::detail::with_diagnostics(diag, std::forward<Token>(token));
    return boost::asio::async_initiate<decltype(with_diag), void(std::error_code)>(
        [&conn](amqp::detail::op_handler<> h, std::string q) {
            detail::declare_checkpoint_stream(conn, std::move(q), std::move(h));
        },
        with_diag, std::move(queue));
}

/// Finds the newest complete checkpoint of `queue`, reading its checkpoint
/// stream backwards from a marker it appends (checkpoint_search) →
/// void(std::error_code, checkpoint_found). No checkpoint stream (404) is
/// no error: nothing found. Errors: std::errc::timed_out after `timeout`;
/// the channel's or connection's failure. `diag` and `conn` must outlive
/// the operation.
template <class Token>
auto async_find_checkpoint(amqp::connection& conn, std::string queue, std::chrono::milliseconds timeout,
                           amqp::diagnostics& diag, Token&& token) {
    auto with_diag = amqp::detail::with_diagnostics(diag, std::forward<Token>(token));
    return boost::asio::async_initiate<decltype(with_diag), void(std::error_code, checkpoint_found)>(
        [&conn](amqp::detail::op_handler<checkpoint_found> h, std::string q, std::chrono::milliseconds t) {
            detail::find_checkpoint(conn, std::move(q), t, std::move(h));
        },
        with_diag, std::move(queue), timeout);
}

}  // namespace tarry::control
