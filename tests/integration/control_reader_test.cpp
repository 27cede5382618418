// The consumer's control-stream reader (lib/consumer/control_reader.hpp) on
// the real broker, driven directly so that its timeouts and the checkpoint
// writer's random wait can be made short: a catch-up that outlasts
// catch_up_timeout lets the consumer go on, but no checkpoint is written
// before the reader's marker is read back (a checkpoint of half the stream
// would let the next consumer start without the other half's cancels). A
// subscription the broker stops serving silently is found and replaced.
#include "consumer_fixture.hpp"
#include "control_entries.hpp"
#include "stalled_channel.hpp"

#include "cancellations.hpp"
#include "control_reader.hpp"

#include "tarry/control/checkpoint.hpp"
#include "tarry/control/control_stream.hpp"
#include "tarry/control/tombstone.hpp"
#include "tarry/publisher/publisher.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>

#include <atomic>

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


/// A reader's settings for the stall tests: `queue`, a stall timeout of
/// `stall`, quick polls, no checkpoints.
tarry::detail::control_reader::settings stall_settings(const std::string& queue, std::chrono::milliseconds stall) {
    tarry::detail::control_reader::settings s;
    s.queue = queue;
    s.poll = 100ms;
    s.stall_timeout = stall;
    s.checkpoint_every = 0;
    return s;
}

/// A control_reader on `conn` (and its own publisher for the markers) with
/// `s`, filling `cancels`; what it reports is kept, in order.
struct reader_under_test {
    reader_under_test(amqp::connection& conn, tarry::detail::control_reader::settings s,
                      std::shared_ptr<tarry::detail::cancellations> cancels, std::function<bool()> awaits_entry = {})
        : io(conn.get_executor()),
          marks(conn),
          reader(std::make_shared<tarry::detail::control_reader>(
              conn, marks, std::move(s), tarry::detail::control_tables{std::move(cancels), nullptr, {}, std::move(awaits_entry)},
              [this](bool attached, const std::string& detail) {
                  std::lock_guard lock(m);
                  told.push_back((attached ? "attached: " : "failed: ") + detail);
              })) {}
    ~reader_under_test() { on_io([r = reader] { r->close(); }); }

    /// attach() on the I/O thread, waited for.
    bool attach() { return boost::asio::co_spawn(io, reader->attach(), use_future).get(); }
    /// Runs `f` on the reader's I/O thread and waits for it.
    template <class F>
    void on_io(F f) {
        boost::asio::co_spawn(io, [f]() -> boost::asio::awaitable<void> { f(); co_return; }, use_future)
            .get();
    }
    /// Every report so far, one a line.
    std::string transcript() {
        std::lock_guard lock(m);
        std::string all;
        for (const auto& t : told) all += t + "\n";
        return all;
    }
    std::vector<std::string> reports() {
        std::lock_guard lock(m);
        return told;
    }

    boost::asio::any_io_executor io;
    tarry::publisher marks;
    std::mutex m;
    std::vector<std::string> told;  // guarded by m
    std::shared_ptr<tarry::detail::control_reader> reader;
};

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
    tarry::detail::control_reader::settings s;
    s.queue = queue;
    s.catch_up_timeout = 1ms;  // the marker, behind 5 000 entries, cannot be back in time
    s.checkpoint_every = 100;  // due long before the end
    s.checkpoint_jitter = 0ms;
    auto cancels = std::make_shared<tarry::detail::cancellations>(std::chrono::hours(24));
    reader_under_test r(reading.conn, s, cancels);
    CHECK(r.attach());  // it reads on
    const auto told = r.reports();
    REQUIRE_FALSE(told.empty());
    CHECK_MESSAGE(told.back().find("did not come back within 1 ms") != std::string::npos, told.back());

    // The one checkpoint announced covers every tombstone: it was written
    // once the marker was read, not as soon as 100 entries had been.
    const auto announced = amqp_it::read_stream_entries<tarry::control::checkpointed>(
        c, queue, 1, [](const amqp::message& m, std::string& why) {
            return tarry::control::read_checkpointed(m.properties, why);
        });
    REQUIRE_MESSAGE(!announced.empty(), r.transcript());
    CHECK_MESSAGE(announced.front().covers >= entries - 1, "the first checkpoint covers up to offset "
                                                               << announced.front().covers << " of " << entries
                                                               << " tombstones");
    CHECK(cancels->jobs->size() == entries);
}

TEST_CASE("control_reader: a subscription the broker stops serving without a word is found by an entry appended "
          "here and not read back, and attached again from the last entry read") {
    // Seen in a nemesis run on RabbitMQ 4.0: after a node was killed, a
    // worker's run claims were confirmed but never read back, and two
    // periodic occurrences waited minutes for them.
    TARRY_REQUIRE_BROKER(url);
    TARRY_REQUIRE_BROKER_DIR(dir);
    connected_client c(url);
    const auto queue = unique_name("reader-stall");
    control_stream_cleanup streams{c, queue};
    fill_control_stream(c, queue, 3);

    auto cfg = amqp_it::config_of(url);
    cfg.connection_name = unique_name("stalled-reader");
    client reading(cfg);
    reading.connect();
    const auto s = stall_settings(queue, 1s);
    auto cancels = std::make_shared<tarry::detail::cancellations>(std::chrono::hours(24));
    const auto covered = [&] {
        return cancels->jobs->covers("after-the-stall", 0, std::chrono::system_clock::now());
    };
    reader_under_test r(reading.conn, s, cancels, [&] { return !covered(); });
    REQUIRE(r.attach());
    REQUIRE(cancels->jobs->size() == 3);
    {
        amqp_it::suspended_channel stalled(*dir, cfg.connection_name, s.prefetch);
        // An entry of this process, confirmed (as the consumer's run claims).
        auto ch = confirm_channel(c);
        REQUIRE_FALSE(ch.async_publish("", tarry::control::stream_name(queue),
                                       tarry::control::to_message({"after-the-stall", 1, std::chrono::system_clock::now()}),
                                       {}, use_future)
                          .get());
        r.on_io([reader = r.reader] { reader->appended(); });
        const auto until = std::chrono::steady_clock::now() + 15s;
        while (!covered() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(50ms);
        CHECK_MESSAGE(covered(), "the entry appended during the stall was never read:\n" << r.transcript());
    }
    CHECK_MESSAGE(r.transcript().find("delivered nothing within 1000 ms") != std::string::npos, r.transcript());
    CHECK(r.reader->attached());
    CHECK(cancels->jobs->size() == 4);  // read from the last entry read: nothing twice, nothing skipped
}

TEST_CASE("control_reader: appends read back within the stall timeout keep the subscription: no second attach") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto queue = unique_name("reader-no-stall");
    control_stream_cleanup streams{c, queue};
    fill_control_stream(c, queue, 3);

    connected_client reading(url);
    const auto s = stall_settings(queue, 300ms);
    auto cancels = std::make_shared<tarry::detail::cancellations>(std::chrono::hours(24));
    // What the consumer asks at the stall check: is an entry appended here
    // still unread? Here: a tombstone told as appended and not in the table.
    std::atomic<std::size_t> told_appended{0};
    reader_under_test r(reading.conn, s, cancels, [&] { return cancels->jobs->size() < 3 + told_appended; });
    REQUIRE(r.attach());
    // Appends told, each read back well within the stall timeout: never a
    // second attach.
    auto ch = confirm_channel(c);
    for (int i = 0; i < 10; ++i) {
        REQUIRE_FALSE(ch.async_publish("", tarry::control::stream_name(queue),
                                       tarry::control::to_message({"kept-" + std::to_string(i), 1,
                                                                   std::chrono::system_clock::now()}),
                                       {}, use_future)
                          .get());
        ++told_appended;
        r.on_io([reader = r.reader] { reader->appended(); });
        std::this_thread::sleep_for(100ms);
    }
    std::this_thread::sleep_for(500ms);
    CHECK(cancels->jobs->size() == 13);
    const auto told = r.reports();
    for (const auto& t : told) CHECK_MESSAGE(t.find("delivered nothing") == std::string::npos, t);
    CHECK(told.size() == 1);  // the first attach only
}
