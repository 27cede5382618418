// Checkpoints of the control stream, end to end on the real broker
// (docs/control.md, "Checkpoints"): a consumer writes one once enough
// entries followed the newest, a consumer that starts restores the newest
// complete one and reads the control stream only after the offset it
// covers; a checkpoint whose writer died half-way, or with a malformed
// part, is passed over, and the stream read from its first entry.
#include "consumer_fixture.hpp"
#include "control_entries.hpp"

#include "tarry/contract/schedule_headers.hpp"
#include "tarry/control/checkpoint.hpp"
#include "tarry/control/checkpoint_stream.hpp"
#include "tarry/publisher/publisher.hpp"

using namespace consumer_it;

namespace {

void declare_work_queue(connected_client& c, const std::string& queue) {
    auto declared = queue_opts(queue);
    declared.durable = true;  // as the consumer declares it
    value_of(c.open_channel().async_declare_queue(declared, use_future));
}

/// Jobs with no generation (another client's): any tombstone of their id
/// covers them. Each due now.
void publish_jobs(connected_client& c, const std::string& queue, const std::vector<std::string>& ids) {
    auto ch = confirm_channel(c);
    for (const auto& id : ids) publish_raw(ch, queue, id, {{"perform_job_at", epoch(sys::now())}});
}

/// Waits until every id has run or been cancelled (at most 20 s).
bool settled(running_consumer& rc, const std::vector<std::string>& ids) {
    const auto end = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < end) {
        std::size_t n = 0;
        for (const auto& id : ids) n += (rc.log.find(kind::succeeded, id) || rc.log.find(kind::cancelled, id)) ? 1 : 0;
        if (n == ids.size()) return true;
        std::this_thread::sleep_for(20ms);
    }
    return false;
}

/// Appends `parts` to `queue`'s checkpoint stream (declared first).
void write_parts(connected_client& c, const std::string& queue, const std::vector<amqp::message>& parts) {
    amqp::diagnostics diag;
    ok(tarry::control::async_declare_checkpoint_stream(c.conn, queue, diag, use_future));
    auto ch = confirm_channel(c);
    for (const auto& p : parts)
        ok(ch.async_publish("", tarry::control::checkpoint_stream_name(queue), p, {}, use_future));
}

/// A checkpoint of ten tombstones whose writer died before its last part.
std::vector<amqp::message> half_written(const std::string& id, std::int64_t covers) {
    const auto now = std::chrono::system_clock::now();
    tarry::control::checkpoint_builder half(64);
    for (int i = 0; i < 10; ++i) half.add_tombstone({"x-" + std::to_string(i), 1, now});
    auto parts = std::move(half).finish(id, covers, now);
    REQUIRE(parts.size() >= 2);
    parts.pop_back();
    return parts;
}

/// A work queue (durable, as the consumer declares it) with its streams
/// deleted after the test, a publisher for its commands, and options
/// whose consumer writes no checkpoint of its own.
struct checkpointed_queue {
    explicit checkpointed_queue(const std::string& url, const std::string& what)
        : c(url), o(options_for(unique_name(what))), streams{c, o.queue}, pub(c.conn) {
        o.control_checkpoint_every = 0;
        declare_work_queue(c, o.queue);
    }
    void cancel(const std::string& id) { ok(pub.async_cancel(o.queue, id, use_future)); }

    connected_client c;
    tarry::subscription_options o;
    control_stream_cleanup streams;
    tarry::publisher pub;
};

}  // namespace

TEST_CASE("checkpoint: restored at start; the control stream read only after the offset it covers") {
    TARRY_REQUIRE_BROKER(url);
    checkpointed_queue q(url, "checkpoint-restore");
    auto& c = q.c;
    auto& o = q.o;
    // Offsets 0, 1, 2 of a new stream.
    for (const char* id : {"before-0", "before-1", "before-2"}) q.cancel(id);
    // A checkpoint covering them that says something else: whatever it
    // holds stands for entries 0 to 2.
    tarry::control::checkpoint_builder b;
    b.add_tombstone({"only-in-checkpoint", tarry::contract::next_generation(std::chrono::system_clock::now()),
                     std::chrono::system_clock::now()});
    write_parts(c, o.queue, std::move(b).finish("cp-test", 2, std::chrono::system_clock::now()));
    q.cancel("after");  // offset 3: read
    const std::vector<std::string> ids{"before-1", "only-in-checkpoint", "after", "plain"};
    publish_jobs(c, o.queue, ids);

    running_consumer rc(url, o);
    REQUIRE_MESSAGE(settled(rc, ids), rc.connection_transcript());
    CHECK(rc.log.find(kind::succeeded, "before-1"));  // not read: the checkpoint stands for it
    CHECK(rc.log.find(kind::cancelled, "only-in-checkpoint"));
    CHECK(rc.log.find(kind::cancelled, "after"));
    CHECK(rc.log.find(kind::succeeded, "plain"));
    const auto transcript = rc.connection_transcript();
    CHECK_MESSAGE(transcript.find("from checkpoint 'cp-test'") != std::string::npos, transcript);
    rc.worker.stop();
    cleanup(c, o);
}

TEST_CASE("checkpoint: one whose last part never came, and one with a malformed part, are passed over") {
    TARRY_REQUIRE_BROKER(url);
    checkpointed_queue q(url, "checkpoint-broken");
    auto& c = q.c;
    auto& o = q.o;
    for (const char* id : {"cancelled-0", "cancelled-1"}) q.cancel(id);
    const auto now = std::chrono::system_clock::now();
    // A whole one with nothing in it, covering both tombstones: restoring
    // it would let them run...
    write_parts(c, o.queue, tarry::control::checkpoint_builder().finish("cp-empty", 1, now));
    // ...but newer ones follow: a writer that died before its last part,
    // and one with an unknown record. Each claims to cover both.
    write_parts(c, o.queue, half_written("cp-half", 1));
    auto bad = tarry::control::checkpoint_builder().finish("cp-bad", 1, now);
    bad.front().body.push_back('?');
    write_parts(c, o.queue, bad);

    const std::vector<std::string> ids{"cancelled-0", "cancelled-1"};
    publish_jobs(c, o.queue, ids);
    running_consumer rc(url, o);
    REQUIRE_MESSAGE(settled(rc, ids), rc.connection_transcript());
    // The newest whole one, cp-empty, stands for both tombstones: not read.
    CHECK(rc.log.find(kind::succeeded, "cancelled-0"));
    CHECK(rc.log.find(kind::succeeded, "cancelled-1"));
    const auto transcript = rc.connection_transcript();
    CHECK_MESSAGE(transcript.find("from checkpoint 'cp-empty'") != std::string::npos, transcript);
    CHECK_MESSAGE(transcript.find("skipped a checkpoint part") != std::string::npos, transcript);
    CHECK_MESSAGE(transcript.find("cp-bad") != std::string::npos, transcript);
    rc.worker.stop();
    cleanup(c, o);
}

TEST_CASE("checkpoint: with none whole in the stream, the control stream is read from its first entry") {
    TARRY_REQUIRE_BROKER(url);
    checkpointed_queue q(url, "checkpoint-none");
    auto& c = q.c;
    auto& o = q.o;
    q.cancel("cancelled");
    write_parts(c, o.queue, half_written("cp-half", 0));
    const std::vector<std::string> ids{"cancelled", "runs"};
    publish_jobs(c, o.queue, ids);
    running_consumer rc(url, o);
    REQUIRE_MESSAGE(settled(rc, ids), rc.connection_transcript());
    CHECK(rc.log.find(kind::cancelled, "cancelled"));
    CHECK(rc.log.find(kind::succeeded, "runs"));
    const auto transcript = rc.connection_transcript();
    CHECK_MESSAGE(transcript.find("from checkpoint") == std::string::npos, transcript);
    rc.worker.stop();
    cleanup(c, o);
}

TEST_CASE("checkpoint: written once enough entries followed; the next consumer restores it and honours every cancel") {
    TARRY_REQUIRE_BROKER(url);
    checkpointed_queue q(url, "checkpoint-write");
    auto& c = q.c;
    auto& o = q.o;
    o.control_checkpoint_every = 50;
    for (int i = 0; i < 60; ++i) q.cancel("gone-" + std::to_string(i));
    {
        running_consumer writer(url, o);
        // Its announcement in the control stream says it was written.
        const auto announced = amqp_it::read_stream_entries<tarry::control::checkpointed>(
            c, o.queue, 61, [](const amqp::message& m, std::string& why) {
                return tarry::control::read_checkpointed(m.properties, why);
            });
        REQUIRE_MESSAGE(announced.size() == 1, writer.connection_transcript());
        CHECK(announced.front().covers >= 59);
        writer.worker.stop();
    }
    q.cancel("after");
    const std::vector<std::string> ids{"gone-0", "gone-59", "after", "runs"};
    publish_jobs(c, o.queue, ids);
    o.control_checkpoint_every = 0;
    running_consumer rc(url, o);
    REQUIRE_MESSAGE(settled(rc, ids), rc.connection_transcript());
    CHECK(rc.log.find(kind::cancelled, "gone-0"));
    CHECK(rc.log.find(kind::cancelled, "gone-59"));
    CHECK(rc.log.find(kind::cancelled, "after"));
    CHECK(rc.log.find(kind::succeeded, "runs"));
    const auto transcript = rc.connection_transcript();
    CHECK_MESSAGE(transcript.find("from checkpoint 'cp-") != std::string::npos, transcript);
    CHECK_MESSAGE(transcript.find("60 live entries") != std::string::npos, transcript);
    rc.worker.stop();
    cleanup(c, o);
}

TEST_CASE("checkpoint: found whole among large ones, the newest cut short") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto queue = unique_name("checkpoint-large");
    control_stream_cleanup streams{c, queue};
    const auto now = std::chrono::system_clock::now();
    const auto large = [&](const std::string& id, int records) {
        tarry::control::checkpoint_builder b;
        for (int i = 0; i < records; ++i) b.add_tombstone({std::string(200, 'a') + std::to_string(i), 1, now});
        return std::move(b).finish(id, 7, now);
    };
    write_parts(c, queue, large("older", 60'000));
    auto cut = large("newest", 60'000);
    REQUIRE(cut.size() > 8);
    cut.resize(cut.size() / 2);
    write_parts(c, queue, cut);
    amqp::diagnostics diag;
    const auto found = value_of(tarry::control::async_find_checkpoint(c.conn, queue, 30s, diag, use_future));
    const std::string why = found.why_none + " after " + std::to_string(found.entries_read) + " entries";
    REQUIRE_MESSAGE(found.checkpoint, why);
    CHECK(found.checkpoint->id == "older");
}
