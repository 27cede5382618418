// The consumer's control-stream reader (lib/consumer/control_reader.hpp) on
// the real broker, driven directly so that its timeouts and the checkpoint
// writer's random wait can be made short: a catch-up that outlasts
// catch_up_timeout lets the consumer go on, but no checkpoint is written
// before the reader's marker is read back (a checkpoint of half the stream
// would let the next consumer start without the other half's cancels).
#include "consumer_fixture.hpp"
#include "control_entries.hpp"

#include "cancellations.hpp"
#include "control_reader.hpp"

#include "tarry/control/checkpoint.hpp"
#include "tarry/control/control_stream.hpp"
#include "tarry/control/tombstone.hpp"
#include "tarry/publisher/publisher.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>

using namespace consumer_it;

namespace {

/// Appends `n` tombstones of other jobs to `queue`'s control stream.
void fill_control_stream(connected_client& c, const std::string& queue, int n) {
    ok(tarry::control::async_declare_stream(c.conn, queue, false, use_future));
    auto ch = confirm_channel(c);
    const auto now = std::chrono::system_clock::now();
    std::vector<std::future<std::error_code>> confirms;
    for (int i = 0; i < n; ++i)
        confirms.push_back(ch.async_publish("", tarry::control::stream_name(queue),
                                            tarry::control::to_message({"gone-" + std::to_string(i), 1, now}), {},
                                            use_future));
    for (auto& f : confirms) REQUIRE_FALSE(f.get());
}

}  // namespace

TEST_CASE("control_reader: a catch-up that outlasts its timeout reads on, and writes no checkpoint before its "
          "marker is read") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto queue = unique_name("reader-catch-up");
    control_stream_cleanup streams{c, queue};
    constexpr int entries = 5000;
    fill_control_stream(c, queue, entries);

    connected_client reading(url);
    tarry::publisher marks(reading.conn);
    tarry::detail::control_reader::settings s;
    s.queue = queue;
    s.catch_up_timeout = 1ms;  // the marker, behind 5 000 entries, cannot be back in time
    s.checkpoint_every = 100;  // due long before the end
    s.checkpoint_jitter = 0ms;
    auto cancels = std::make_shared<tarry::detail::cancellations>(std::chrono::hours(24));
    std::mutex told_mutex;
    std::vector<std::string> told;
    auto reader = std::make_shared<tarry::detail::control_reader>(
        reading.conn, marks, s, tarry::detail::control_tables{cancels, nullptr, {}},
        [&](bool attached, const std::string& detail) {
            std::lock_guard lock(told_mutex);
            told.push_back((attached ? "attached: " : "failed: ") + detail);
        });
    const bool caught_up = boost::asio::co_spawn(reading.conn.get_executor(), reader->attach(), use_future).get();
    CHECK(caught_up);  // it reads on
    {
        std::lock_guard lock(told_mutex);
        REQUIRE_FALSE(told.empty());
        CHECK_MESSAGE(told.back().find("did not come back within 1 ms") != std::string::npos, told.back());
    }

    // The one checkpoint announced covers every tombstone: it was written
    // once the marker was read, not as soon as 100 entries had been.
    const auto announced = amqp_it::read_stream_entries<tarry::control::checkpointed>(
        c, queue, 1, [](const amqp::message& m, std::string& why) {
            return tarry::control::read_checkpointed(m.properties, why);
        });
    const auto transcript = [&] {
        std::lock_guard lock(told_mutex);
        std::string all;
        for (const auto& t : told) all += t + "\n";
        return all;
    };
    REQUIRE_MESSAGE(!announced.empty(), transcript());
    CHECK_MESSAGE(announced.front().covers >= entries - 1, "the first checkpoint covers up to offset "
                                                               << announced.front().covers << " of " << entries
                                                               << " tombstones");
    CHECK(cancels->jobs->size() == entries);
    boost::asio::co_spawn(
        reading.conn.get_executor(), [reader]() -> boost::asio::awaitable<void> { reader->close(); co_return; },
        use_future)
        .get();
}
