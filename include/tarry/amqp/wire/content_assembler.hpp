// Reassembles one channel's content (header frame + body frames) after a
// content-bearing method (basic.publish, deliver, return, get-ok).
//
// A pure state machine: idle → expect_content() → header frame → body
// frames until body_size bytes → ready → take() → idle. It copies each body
// frame's payload into the body it builds, so the frames it is given need
// only live for the call. It never reserves more than it has reason to:
// body_size from the wire is checked against max_body_size first, and the
// up-front reservation is capped, so memory follows the bytes that really
// arrive.
//
// Two kinds of fault, kept apart:
// - the framing (a frame out of order, a header whose class, weight or
//   size fields are wrong, more body bytes than announced): the frames
//   cannot be trusted, so on_frame fails; errors are sticky until reset();
// - the message (properties that do not decode, a body_size above
//   max_body_size): the frames are sound, so the content completes as
//   usual, marked `unreadable` with what was wrong. Properties that do not
//   decode are kept as raw bytes; a body over the limit is read and dropped
//   frame by frame, never buffered.
// Not thread-safe: one owner (the channel's I/O thread) calls everything.
#pragma once

#include "tarry/amqp/wire/error.hpp"
#include "tarry/amqp/wire/field_table.hpp"
#include "tarry/amqp/wire/limits.hpp"
#include "tarry/amqp/wire/frame.hpp"
#include "tarry/amqp/wire/properties.hpp"
#include "tarry/amqp/wire/unreadable_content.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tarry::amqp::wire {

/// A complete content: the header's properties and the whole body, or,
/// when `unreadable` is set, what of them could be read.
struct message_content {
    basic_properties properties;      ///< empty when they did not decode
    std::vector<std::uint8_t> body;   ///< the whole body; empty when dropped
    /// Set when the content could not be read (see unreadable_content).
    std::optional<unreadable_content> unreadable;

    /// Equal when every field is.
    friend bool operator==(const message_content&, const message_content&) = default;
};

/// Reassembles one channel's content from its header and body frames,
/// keeping faults of the framing apart from faults of the message (see this
/// header's opening comment). Not thread-safe: one owner calls everything.
class content_assembler {
public:
    /// The default limit on a content's body_size (limits.hpp).
    static constexpr std::uint64_t default_max_body_size = wire::default_max_body_size;

    /// Assembles content on `channel`; a body above max_body_size is
    /// dropped as it arrives (the content comes out unreadable), so nothing
    /// is ever allocated for it.
    explicit content_assembler(std::uint16_t channel,
                               std::uint64_t max_body_size = default_max_body_size,
                               table_limits limits = {});

    /// The caller has just decoded a content-bearing method: the next frames
    /// on this channel must be its header and body. Fails with
    /// unexpected_frame when a content is already under way or ready.
    std::error_code expect_content();

    /// Offers the next frame on this channel (the caller handles heartbeats
    /// and routes frames by channel). Errors, all about the framing:
    /// unexpected_frame for a frame of another channel, a method frame while
    /// content is due, or a header or body frame when none is due; the error
    /// of decode_content_header_fields for a header whose class, weight or
    /// body size cannot be read (bad_content_header, truncated);
    /// body_too_large when the body frames carry more than body_size.
    /// Properties that do not decode and a body_size above max_body_size
    /// are no error: the content completes, marked unreadable.
    std::error_code on_frame(const frame_view& f);

    /// True from expect_content() until the content is complete.
    bool in_progress() const noexcept {
        return state_ == state::want_header || state_ == state::want_body;
    }
    /// True when a complete content waits to be taken.
    bool ready() const noexcept { return state_ == state::ready; }
    /// Moves the complete content out and returns to idle. Precondition:
    /// ready(); otherwise returns an empty content and changes nothing.
    message_content take();

    /// body_size announced by the current header (0 before the header).
    std::uint64_t body_size() const noexcept { return body_size_; }
    /// Body bytes received so far for the current content (dropped ones too).
    std::uint64_t received() const noexcept { return received_; }

    /// The first framing error, sticky until reset(); none while there is none.
    std::error_code error() const noexcept { return error_; }
    /// A one-line explanation of error() (empty when none).
    const std::string& detail() const noexcept { return detail_; }

    /// Drops any partial content and the error: back to idle.
    void reset() noexcept;

private:
    enum class state { idle, want_header, want_body, ready, failed };

    std::error_code fail(errc code, std::string detail);
    /// Marks the current content unreadable: the first `code` stays, the
    /// details are joined.
    void mark_unreadable(errc code, const std::string& detail);
    std::error_code on_header(const frame_view& f);
    std::error_code on_body(const frame_view& f);

    std::uint16_t channel_;
    std::uint64_t max_body_size_;
    table_limits limits_;
    state state_ = state::idle;
    std::uint64_t body_size_ = 0;
    std::uint64_t received_ = 0;
    bool keep_body_ = true;  ///< false while a body over the limit is being dropped
    message_content content_;
    std::error_code error_;
    std::string detail_;
};

}  // namespace tarry::amqp::wire
