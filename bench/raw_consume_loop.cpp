// A bare consume-and-ack loop (see raw_consume_loop.hpp).
#include "raw_consume_loop.hpp"

#include <boost/asio/use_future.hpp>

#include <atomic>
#include <future>
#include <limits>
#include <memory>

namespace cbench {

using boost::asio::use_future;

double raw_consume_rate(const std::vector<amqp::connection_config>& consumers, const std::string& queue,
                        std::size_t n, std::uint16_t prefetch, std::chrono::seconds limit) {
    std::atomic<std::size_t> acked{0};
    std::atomic<steady::rep> first{std::numeric_limits<steady::rep>::max()};
    std::atomic<steady::rep> last{0};
    std::promise<void> all;
    std::vector<std::unique_ptr<endpoint>> ends;
    std::vector<std::string> tags;
    for (const auto& cfg : consumers) {
        auto& e = *ends.emplace_back(std::make_unique<endpoint>(cfg));
        amqp::qos_options qos;
        qos.prefetch_count = prefetch;
        check(e.ch.async_qos(qos, use_future).get(), "qos");
        amqp::consumer_handlers h;
        h.on_delivery = [&, ch = e.ch](amqp::delivery d) {
            const auto now = steady::now().time_since_epoch().count();
            for (auto seen = first.load(); now < seen && !first.compare_exchange_weak(seen, now);) {
            }
            ch.async_ack(d.delivery_tag, {}, [](std::error_code) {});
            if (++acked == n) {
                last = now;
                all.set_value();
            }
        };
        amqp::consume_options o;
        o.queue = queue;
        auto [ec, tag] = e.ch.async_consume(o, h, use_future).get();
        check(ec, "consume");
        tags.push_back(tag);
    }
    const bool done = all.get_future().wait_for(limit) == std::future_status::ready;
    for (std::size_t i = 0; i < ends.size(); ++i) ends[i]->ch.async_cancel(tags[i], use_future).wait_for(10s);
    ends.clear();  // closes the connections before `acked` and `all` go
    if (!done) die("raw consume: " + std::to_string(acked.load()) + " of " + std::to_string(n) + " acked in " +
                   std::to_string(limit.count()) + " s");
    return static_cast<double>(n) / std::chrono::duration<double>(steady::duration(last - first)).count();
}

}  // namespace cbench
