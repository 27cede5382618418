// A bare park loop (see raw_park_loop.hpp).
#include "raw_park_loop.hpp"

#include <boost/asio/use_future.hpp>

#include <atomic>
#include <future>

namespace cbench {

using boost::asio::use_future;

double raw_park_rate(const amqp::connection_config& config, const std::string& queue, const std::string& to,
                     std::size_t n, std::uint16_t prefetch, std::chrono::seconds limit) {
    std::atomic<std::size_t> acked{0};
    std::promise<void> all;
    steady::time_point first{}, last{};
    std::atomic<bool> started{false};
    endpoint consuming(config), copies(config);
    check(copies.ch.async_confirm_select(use_future).get(), "confirm.select");
    amqp::qos_options qos;
    qos.prefetch_count = prefetch;
    check(consuming.ch.async_qos(qos, use_future).get(), "qos");
    amqp::consumer_handlers h;
    h.on_delivery = [&, in = consuming.ch, out = copies.ch](amqp::delivery d) {
        if (!started.exchange(true)) first = steady::now();  // the consuming thread only
        // The copy's confirm completes on the copies connection's thread;
        // the ack goes out on the consuming channel from there.
        out.async_publish("", to, d.msg, {}, [&, in, tag = d.delivery_tag](std::error_code ec) {
            if (ec) return;  // counted as missing: the loop then dies at `limit`
            in.async_ack(tag, {}, [](std::error_code) {});
            if (++acked == n) {
                last = steady::now();
                all.set_value();
            }
        });
    };
    amqp::consume_options o;
    o.queue = queue;
    auto [ec, tag] = consuming.ch.async_consume(o, h, use_future).get();
    check(ec, "consume");
    const bool done = all.get_future().wait_for(limit) == std::future_status::ready;
    consuming.ch.async_cancel(tag, use_future).wait_for(10s);
    if (!done) die("raw park: " + std::to_string(acked.load()) + " of " + std::to_string(n) + " parked in " +
                   std::to_string(limit.count()) + " s");
    return static_cast<double>(n) / std::chrono::duration<double>(last - first).count();
}

}  // namespace cbench
