// Broker facts that tarry's delivery limit handling rests on, checked on
// the broker under test through pika (broker_counts.py): where a quorum
// queue's x-delivery-count starts, which returns raise it, and the limit a
// quorum queue has when it sets none (docs/compatibility.md). The
// expectations for 3.10 and 4.0 were measured; those for 4.3 come from its
// release notes and documentation and have not been run yet. A failure
// here means the broker changed under tarry: docs/compatibility.md and the
// consumer's delivery limit handling need another look.
#include "../integration/amqp_client.hpp"
#include "python_peer.hpp"

#include <boost/json.hpp>  // definitions: pika_interop_test.cpp includes boost/json/src.hpp

#include <cstdio>

using namespace amqp_it;
namespace json = boost::json;

namespace {

struct broker_version {
    int major = 0;
    int minor = 0;
    bool at_least(int ma, int mi) const { return major > ma || (major == ma && minor >= mi); }
};

broker_version version_of(const json::object& o) {
    broker_version v;
    const std::string text(o.at("version").as_string());
    REQUIRE_MESSAGE(std::sscanf(text.c_str(), "%d.%d", &v.major, &v.minor) == 2, "version " << text);
    return v;
}

json::object run_counts(const std::vector<std::string>& args) {
    auto r = tarry_test::run_python("broker_counts.py", args, 120s);
    REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
    return json::parse(r.out).as_object();
}

/// A count header of one delivery as the peer saw it; -1 when absent.
std::int64_t count(const json::value& delivery, const char* header) {
    const auto& v = delivery.as_object().at(header);
    return v.is_null() ? -1 : v.to_number<std::int64_t>();
}

void delete_queue(const std::string& url, const std::string& q) {
    connected_client c(url);
    auto ch = c.open_channel();
    value_of(ch.async_delete_queue(q, {}, use_future));
}

}  // namespace

TEST_CASE("broker facts: x-delivery-count of a quorum queue's message, delivery by delivery") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("facts-counts");
    const auto o = run_counts({"sequence", url, q, "quorum"});
    delete_queue(url, q);
    const auto v = version_of(o);
    const auto& d = o.at("deliveries").as_array();
    REQUIRE(d.size() == 8);
    // What gave back the delivery before each: -, nack, nack, reject,
    // reject, channel.close, connection.close, client basic.cancel + nack.
    // A consumer's first delivery carries no count on any version.
    CHECK(count(d[0], "x-delivery-count") == -1);
    CHECK(count(d[0], "x-acquired-count") == -1);
    CHECK_FALSE(d[0].as_object().at("redelivered").as_bool());
    if (!v.at_least(4, 3)) {
        // Up to 4.2 every return counts, and x-acquired-count does not exist.
        for (std::size_t i = 1; i < d.size(); ++i) {
            CAPTURE(i);
            CHECK(count(d[i], "x-delivery-count") == static_cast<std::int64_t>(i));
            CHECK(count(d[i], "x-acquired-count") == -1);
        }
    } else {
        // 4.3: x-acquired-count counts every return; x-delivery-count, the
        // one the limit is checked against, only rejects and closed
        // channels or connections.
        const std::int64_t failed[] = {-1, -1, -1, 1, 2, 3, 4, 4};
        for (std::size_t i = 1; i < d.size(); ++i) {
            CAPTURE(i);
            CHECK(count(d[i], "x-delivery-count") == failed[i]);
            CHECK(count(d[i], "x-acquired-count") == static_cast<std::int64_t>(i));
        }
    }
}

TEST_CASE("broker facts: a classic queue's message carries no count") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("facts-classic");
    const auto o = run_counts({"sequence", url, q, "classic"});
    delete_queue(url, q);
    for (const auto& delivery : o.at("deliveries").as_array()) {
        CHECK(count(delivery, "x-delivery-count") == -1);
        CHECK(count(delivery, "x-acquired-count") == -1);
    }
}

TEST_CASE("broker facts: the delivery limit of a quorum queue that sets none") {
    TARRY_REQUIRE_BROKER(url);
    // Given back by reject every time: from 4.0 the default limit of 20
    // lets a message be taken 21 times; before 4.0 there is no limit.
    const auto qr = unique_name("facts-limit-reject");
    const auto r = run_counts({"limit", url, qr, "reject", "25"});
    delete_queue(url, qr);
    const auto v = version_of(r);
    const bool limited = v.at_least(4, 0);
    CHECK(r.at("taken").to_number<int>() == (limited ? 21 : 25));
    CHECK(r.at("left").to_number<int>() == (limited ? 0 : 1));

    // Given back by nack: the same up to 4.2; from 4.3 nacks do not count.
    const auto qn = unique_name("facts-limit-nack");
    const auto n = run_counts({"limit", url, qn, "nack", "25"});
    delete_queue(url, qn);
    const bool nacks_count = v.at_least(4, 0) && !v.at_least(4, 3);
    CHECK(n.at("taken").to_number<int>() == (nacks_count ? 21 : 25));
    CHECK(n.at("left").to_number<int>() == (nacks_count ? 0 : 1));
}
