// The sans-I/O AMQP 0-9-1 connection: bytes and timer events in, bytes to
// write, a deadline to arm and events for the user out.
//
// One machine lives for one transport connection. Its driver:
//   1. calls start(now) once the socket is connected;
//   2. reads into prepare_read() and calls commit_read(n, now), or calls
//      on_bytes(span, now);
//   3. after every call, writes what take_output() gives (in order), arms a
//      timer for next_deadline() and calls on_timer(now) when it fires,
//      and handles take_events();
//   4. reports a failed read/write or EOF with on_transport_error();
//   5. closes the socket once finished() and the output is written.
// Time is always passed in, never read, so tests step it exactly.
//
// Requests carry an op_id chosen by the driver; each produces exactly one
// ev_op_done for that id (success or error), whatever happens to the
// connection afterwards — nothing is left waiting. Every event is queued;
// no callback is ever made from inside the machine.
//
// Synchronous requests on a channel go out one at a time: while one waits
// for its reply, later frames of that channel (publishes, acks, the next
// request) are held in order and sent when the reply arrives.
//
// Not thread-safe: the I/O thread owns it.
#pragma once

#include "channel_state.hpp"
#include "machine_types.hpp"

#include "tarry/amqp/wire/frame_parser.hpp"

#include <deque>
#include <map>
#include <memory>
#include <span>
#include <vector>

namespace tarry::amqp::detail {

class connection_machine {
public:
    enum class state {
        idle,              ///< start() not called yet
        awaiting_start,    ///< protocol header sent
        awaiting_tune,     ///< start-ok sent (credentials being checked)
        awaiting_open_ok,  ///< tune-ok and open sent
        open,
        closing,           ///< our connection.close sent, waiting for close-ok
        closed,            ///< finished: close the socket once output is written
    };

    explicit connection_machine(machine_config config);

    // ---- driving ----------------------------------------------------------

    /// Sends the protocol header. `handshake_deadline` (if set) bounds the
    /// whole AMQP handshake: after it, the connection fails with
    /// errc::connect_timeout.
    void start(time_point now, std::optional<time_point> handshake_deadline = std::nullopt);

    /// Received bytes (copied into the parser).
    void on_bytes(std::span<const std::uint8_t> bytes, time_point now);
    /// Space for a socket read of up to `n` bytes, then commit_read() how
    /// many arrived (zero-copy variant of on_bytes).
    std::span<std::uint8_t> prepare_read(std::size_t n);
    void commit_read(std::size_t n, time_point now);

    /// The timer armed for next_deadline() fired (early is harmless).
    void on_timer(time_point now);

    /// The socket failed, or the peer closed it (EOF). Fails everything
    /// pending with `ec` (errc::connection_lost for a plain loss), unless the
    /// connection was already closing cleanly.
    void on_transport_error(std::error_code ec, std::string detail, time_point now);

    /// Ends the connection now with exactly `ec` (the driver's own
    /// verdict: connect timeout, TLS failure, shutdown). Works in any
    /// state, idle included; a no-op once finished.
    void abort(std::error_code ec, std::string detail);

    // ---- outputs ----------------------------------------------------------

    bool has_output() const noexcept { return !out_.empty(); }
    /// Swaps the pending output into `into` (which should be empty); the
    /// caller writes it all, in order, starting at `now` (which counts as
    /// the time of our last traffic for heartbeats).
    void take_output(std::vector<std::uint8_t>& into, time_point now);
    /// When on_timer() must next be called; nothing when no timer is needed.
    std::optional<time_point> next_deadline() const noexcept;
    bool has_events() const noexcept { return !events_.empty(); }
    /// Moves the queued events out, oldest first.
    void take_events(std::deque<event>& into);

    state current_state() const noexcept { return state_; }
    bool is_open() const noexcept { return state_ == state::open; }
    bool finished() const noexcept { return state_ == state::closed; }
    const negotiated_limits& limits() const noexcept { return limits_; }
    bool blocked() const noexcept { return blocked_; }

    // ---- requests ----------------------------------------------------------

    /// Opens a channel on the lowest free number; ev_op_done carries it.
    void open_channel(op_id op);
    /// Closes a channel (channel.close, waits for close-ok). Pending
    /// operations on it fail with errc::channel_closed.
    void close_channel(channel_ref ch, op_id op);
    /// A synchronous request (declare, bind, qos, get, recover, flow,
    /// confirm.select, cancel, ...): completes with the broker's reply.
    /// confirm.select-ok turns on confirm tracking for later publishes.
    void request(channel_ref ch, wire::method m, op_id op);
    /// basic.consume: completes `op` with consume-ok; deliveries then carry
    /// `consumer` until ev_consumer_ended for it.
    void consume(channel_ref ch, wire::basic_consume m, op_id op, op_id consumer);
    /// An asynchronous method (ack, nack, reject, recover-async): `op`
    /// completes once it is queued for writing.
    void send(channel_ref ch, wire::method m, op_id op);
    /// basic.publish + content. On a confirm channel `op` completes with the
    /// broker's ack (success) or nack (errc::publish_nacked); otherwise once
    /// queued for writing.
    void publish(channel_ref ch, const wire::basic_publish& m,
                 const wire::basic_properties& properties, std::span<const std::uint8_t> body,
                 op_id op);
    /// The same, with frames already encoded for this channel and frame_max
    /// (encode_publish), so callers can encode on their own thread.
    void publish_encoded(channel_ref ch, std::vector<std::uint8_t> frames, op_id op);
    /// Closes the connection cleanly (connection.close, waits for close-ok
    /// at most close_timeout). Everything pending fails with
    /// errc::connection_closed; `op` completes when the close is done.
    /// Before the connection is open, aborts it at once.
    void close(op_id op, time_point now, std::uint16_t code = 200,
               std::string text = "closed by the client");

    /// Frames of a publish, ready for publish_encoded. Errors (nothing
    /// appended), with `detail`: header_too_large when the properties do
    /// not fit one frame of frame_max; invalid_argument for a shortstr over
    /// 255 bytes and the like.
    static std::error_code encode_publish(std::vector<std::uint8_t>& out, std::uint16_t channel,
                                          const wire::basic_publish& m,
                                          const wire::basic_properties& properties,
                                          std::span<const std::uint8_t> body,
                                          std::uint32_t frame_max, std::string* detail);

    /// Channels currently open (for tests and metrics).
    std::size_t open_channels() const noexcept { return channels_.size(); }
    /// Publishes awaiting a confirm on `ch` (0 if not a confirm channel).
    std::size_t unconfirmed(channel_ref ch) const noexcept;

private:
    void process_frames(time_point now);
    void on_frame(const wire::frame_view& f, time_point now);
    void on_connection_method(wire::method& m, time_point now);
    void on_channel_frame(const wire::frame_view& f);
    void on_channel_method(channel_state& ch, wire::method& m);
    void on_reply(channel_state& ch, wire::method& m);
    void on_content_complete(channel_state& ch);
    void on_server_channel_close(channel_state& ch, const wire::channel_close& m);

    /// The negotiated frame_max, or the protocol minimum before tune.
    std::uint32_t frame_max() const noexcept;
    void write_method(std::uint16_t channel, const wire::method& m);
    bool encode_method_frame(std::vector<std::uint8_t>& out, std::uint16_t channel,
                             const wire::method& m, std::string* detail);
    void flush(channel_state& ch);
    void enqueue(channel_state& ch, outgoing item);
    channel_state* find(channel_ref ref) noexcept;
    /// True on an open connection; otherwise completes `op` with not_connected.
    bool require_open(op_id op);
    /// The open channel `ref` names on an open connection; otherwise
    /// completes `op` with not_connected or channel_closed and gives nullptr.
    channel_state* usable_channel(channel_ref ref, op_id op);
    /// usable_channel(), then `m` encoded into item.frames and item.op set;
    /// an unencodable `m` completes `op` with invalid_argument (nullptr).
    channel_state* prepare(channel_ref ref, const wire::method& m, op_id op, outgoing& item);
    std::uint16_t free_channel_number() const noexcept;

    void complete(op_id op, std::error_code ec, std::string detail = {},
                  std::optional<broker_reply> closed_by = std::nullopt);
    /// Fails every operation and consumer of a channel and forgets it; the
    /// operations carry `reply` (the broker's close, if it closed it).
    void drop_channel(std::uint16_t number, std::error_code ec, const std::string& detail,
                      const std::optional<broker_reply>& reply);
    /// Ends the connection: fails everything with ec, queues the closed event.
    void finish(std::error_code ec, std::string detail, std::optional<broker_reply> reply);
    /// A protocol violation by the peer: say so with connection.close (best
    /// effort) and finish at once.
    void protocol_failure(std::uint16_t code, std::string detail);

    machine_config config_;
    state state_ = state::idle;
    wire::frame_parser parser_;
    std::vector<std::uint8_t> out_;
    std::deque<event> events_;
    negotiated_limits limits_;
    wire::field_table server_properties_;
    bool blocked_ = false;

    std::map<std::uint16_t, std::unique_ptr<channel_state>> channels_;
    std::uint64_t next_serial_ = 1;

    std::optional<time_point> handshake_deadline_;
    std::optional<time_point> close_deadline_;
    std::vector<op_id> close_ops_;
    time_point last_sent_{};
    time_point last_received_{};
};

const char* to_string(connection_machine::state s) noexcept;

}  // namespace tarry::amqp::detail
