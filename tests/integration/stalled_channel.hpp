// A subscription the broker stops serving without a word: the channel
// process in the broker suspended (sys:suspend through rabbitmqctl eval),
// so it delivers nothing more, while the connection, its heartbeats and
// its other channels go on. What a stream consumer looked like in a
// nemesis run on RabbitMQ 4.0 after a node was killed.
#pragma once

#include "private_broker.hpp"

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

namespace amqp_it {

/// Suspends, until destroyed, the broker's channel of the connection whose
/// connection_name is exactly `name` and whose prefetch is `prefetch`
/// (one channel must match). `dir` is the node's directory.
class suspended_channel {
public:
    suspended_channel(std::string dir, const std::string& name, int prefetch) : dir_(std::move(dir)) {
        const auto conn = connection_pid(name);
        auto r = tarry_test::private_broker::broker_ctl(
            dir_, {"list_channels", "connection", "pid", "prefetch_count", "--no-table-headers", "--quiet"});
        REQUIRE_MESSAGE(r.exit_code == 0, r.err);
        std::istringstream lines(r.out);
        std::vector<std::string> found;
        for (std::string c, pid, n; lines >> c >> pid >> n;)
            if (c == conn && n == std::to_string(prefetch)) found.push_back(pid);
        REQUIRE_MESSAGE(found.size() == 1, r.out);
        pid_ = found.front();
        auto s = tarry_test::private_broker::broker_ctl(dir_, {"eval", call("suspend")});
        REQUIRE_MESSAGE(s.exit_code == 0, s.out << s.err);
    }
    ~suspended_channel() { tarry_test::private_broker::broker_ctl(dir_, {"eval", call("resume")}); }
    suspended_channel(const suspended_channel&) = delete;
    suspended_channel& operator=(const suspended_channel&) = delete;

private:
    std::string connection_pid(const std::string& name) const {
        auto r = tarry_test::private_broker::broker_ctl(
            dir_, {"list_connections", "pid", "client_properties", "--no-table-headers", "--quiet"});
        REQUIRE_MESSAGE(r.exit_code == 0, r.err);
        std::istringstream lines(r.out);
        std::vector<std::string> pids;
        const std::string exact = "{\"connection_name\",\"" + name + "\"}";
        for (std::string line; std::getline(lines, line);)
            if (line.find(exact) != std::string::npos) pids.push_back(line.substr(0, line.find('\t')));
        REQUIRE_MESSAGE(pids.size() == 1, r.out);
        return pids.front();
    }
    std::string call(const std::string& f) const {
        return "sys:" + f + "(rabbit_misc:string_to_pid(<<\"" + pid_ + "\">>)).";
    }
    std::string dir_;
    std::string pid_;
};

}  // namespace amqp_it
