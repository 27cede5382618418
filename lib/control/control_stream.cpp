// The control stream's name, its fixed arguments, and declaring it on a
// channel of its own.
#include "tarry/control/control_stream.hpp"

#include "stream_declare.hpp"

#include "tarry/amqp/channel.hpp"

#include <memory>
#include <random>

namespace tarry::control {

std::string stream_name(std::string_view queue) {
    std::string name(queue);
    name += ".tarry.control";
    return name;
}

amqp::message marker_message(std::string id) {
    amqp::message m;
    m.properties.type = std::string(marker_type);
    m.properties.message_id = std::move(id);
    return m;
}

bool is_marker(const amqp::basic_properties& p) noexcept { return p.type == marker_type; }

stream_end::stream_end(std::string_view prefix) {
    thread_local std::mt19937_64 rng(std::random_device{}());
    id_ = std::string(prefix) + '-' + std::to_string(rng()) + '-' + std::to_string(rng());
}

amqp::message stream_end::marker() const { return marker_message(id_); }

amqp::wire::field_table stream_arguments() {
    const auto days = std::chrono::duration_cast<std::chrono::days>(stream_max_age).count();
    return {
        {"x-queue-type", std::string("stream")},
        {"x-max-age", std::to_string(days) + "D"},
        {"x-stream-max-segment-size-bytes", stream_segment_bytes},
    };
}

namespace detail {

void declare_on_own_channel(amqp::connection& conn, amqp::queue_options q, amqp::detail::op_handler<> h) {
    struct op {
        amqp::detail::op_handler<> done;
        amqp::diagnostics diag;
        amqp::connection::executor_type ex;
    };
    auto o = std::make_shared<op>(op{std::move(h), {}, conn.get_executor()});
    conn.async_open_channel(o->diag, [o, q = std::move(q)](std::error_code ec, amqp::channel ch) mutable {
        if (ec) return std::move(o->done).complete(o->ex, std::move(o->diag));
        ch.async_declare_queue(std::move(q), o->diag, [o, ch](std::error_code ec, const amqp::queue_info&) {
            if (ec) return std::move(o->done).complete(o->ex, std::move(o->diag));  // the broker closed it
            ch.async_close([o](std::error_code) { std::move(o->done).complete(o->ex, {}); });
        });
    });
}

void open_for_reading(amqp::connection& conn, std::string stream, std::uint16_t prefetch, amqp::diagnostics& diag,
                      std::function<void(std::error_code, amqp::channel)> then) {
    conn.async_open_channel(diag, [&diag, stream = std::move(stream), prefetch,
                                   then = std::move(then)](std::error_code ec, amqp::channel ch) mutable {
        if (ec) return then(ec, {});
        amqp::queue_options q;
        q.name = std::move(stream);
        q.passive = true;
        ch.async_declare_queue(std::move(q), diag, [&diag, ch, prefetch, then = std::move(then)](
                                                       std::error_code ec, const amqp::queue_info&) mutable {
            if (ec) return then(ec, ch);
            ch.async_qos({prefetch, 0, false}, diag, [ch, then = std::move(then)](std::error_code ec) mutable {
                then(ec, ch);
            });
        });
    });
}

void declare_stream(amqp::connection& conn, std::string queue, bool passive, amqp::detail::op_handler<> h) {
    amqp::queue_options q;
    q.name = stream_name(queue);
    q.passive = passive;
    if (!passive) {
        q.durable = true;
        q.arguments = stream_arguments();
    }
    declare_on_own_channel(conn, std::move(q), std::move(h));
}

}  // namespace detail

}  // namespace tarry::control
