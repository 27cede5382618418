// Test helpers: a loopback TCP relay in front of a broker, on its own
// thread, that can cut every connection through it at once — a "dropped
// socket" without touching the broker — or only some, or silence one
// client towards it.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <future>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

namespace tarry_test {

class tcp_relay {
public:
    /// Listens on 127.0.0.1 (on `listen_port`, or a free port when 0) and
    /// forwards to target.
    tcp_relay(std::string target_host, std::uint16_t target_port, std::uint16_t listen_port = 0)
        : acceptor_(ctx_, {boost::asio::ip::make_address("127.0.0.1"), listen_port}),
          target_(boost::asio::ip::make_address(target_host), target_port) {
        accept();
        thread_ = std::thread([this] { ctx_.run(); });
    }
    ~tcp_relay() {
        boost::asio::post(ctx_, [this] {
            boost::system::error_code ec;
            acceptor_.close(ec);
            cut_now();
        });
        ctx_.stop();
        thread_.join();
    }

    std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

    /// Closes every relayed connection (both sides, RST-free close).
    void cut_all() {
        std::promise<void> done;
        boost::asio::post(ctx_, [&] {
            cut_now();
            done.set_value();
        });
        done.get_future().wait();
    }
    std::size_t accepted() const noexcept { return accepted_.load(); }

    /// Closes, as cut_all() does, the relayed connections whose client sent
    /// `marker` within its first 4 KiB (with_marker), or those whose client
    /// did not (!with_marker); the others flow on. E.g. marker " (copies)"
    /// tells a consumer's copies connection by its connection_name
    /// (connection.start-ok). How many were closed.
    std::size_t cut_if(const std::string& marker, bool with_marker) {
        std::promise<std::size_t> done;
        boost::asio::post(ctx_, [&] {
            std::size_t n = 0;
            for (auto it = pairs_.begin(); it != pairs_.end();) {
                auto& p = **it;
                if ((p.head.find(marker) != std::string::npos) != with_marker) {
                    ++it;
                    continue;
                }
                close(p);
                it = pairs_.erase(it);
                ++n;
            }
            done.set_value(n);
        });
        return done.get_future().get();
    }

    /// Once, the next time a client sends `marker` (within one read), closes
    /// that connection as cut_all() does, before the bytes reach the
    /// target; the others flow on. E.g. a queue's name cuts the connection
    /// that is about to declare or consume it.
    void cut_when_sent(std::string marker) {
        std::promise<void> done;
        boost::asio::post(ctx_, [&] {
            cut_marker_ = std::move(marker);
            done.set_value();
        });
        done.get_future().wait();
    }
    /// How many connections cut_when_sent() has closed.
    std::size_t cut_on_marker() const noexcept { return cut_on_marker_.load(); }

    /// From now on, what the `n`-th connection accepted (0-based, in accept
    /// order) sends towards the target is read and dropped: the target hears
    /// nothing more from that client (an ack that must never arrive), while
    /// the other direction and the other connections flow. cut_all() ends it.
    void hold_upstream(std::size_t n) {
        std::promise<void> done;
        boost::asio::post(ctx_, [&] {
            for (auto& p : pairs_)
                if (p->index == n) p->upstream_held = true;
            done.set_value();
        });
        done.get_future().wait();
    }

private:
    using tcp = boost::asio::ip::tcp;
    struct pair {
        explicit pair(boost::asio::io_context& c, std::size_t i) : a(c), b(c), index(i) {}
        tcp::socket a, b;
        std::size_t index;           // in accept order
        bool upstream_held = false;  // a -> b bytes are dropped (relay thread only)
        std::string head;            // the client's first bytes (relay thread only)
        std::array<char, 65536> ab{}, ba{};
    };

    /// Both sides of one relayed connection (its pumps end on their own).
    static void close(pair& p) {
        boost::system::error_code ignored;
        p.a.close(ignored);
        p.b.close(ignored);
    }

    void cut_now() {
        for (auto& p : pairs_) close(*p);
        pairs_.clear();
    }

    void accept() {
        auto p = std::make_shared<pair>(ctx_, accepted_.load());
        acceptor_.async_accept(p->a, [this, p](boost::system::error_code ec) {
            if (ec) return;
            ++accepted_;
            p->b.async_connect(target_, [this, p](boost::system::error_code ec) {
                if (ec) {
                    boost::system::error_code ignored;
                    p->a.close(ignored);
                    return;
                }
                pairs_.push_back(p);
                pump(p, p->a, p->b, p->ab);
                pump(p, p->b, p->a, p->ba);
            });
            accept();
        });
    }

    void pump(std::shared_ptr<pair> p, tcp::socket& from, tcp::socket& to,
              std::array<char, 65536>& buf) {
        from.async_read_some(boost::asio::buffer(buf), [this, p, &from, &to, &buf](
                                                            boost::system::error_code ec,
                                                            std::size_t n) {
            if (ec) {
                boost::system::error_code ignored;
                to.close(ignored);
                from.close(ignored);
                return;
            }
            if (&from == &p->a && p->head.size() < 4096)
                p->head.append(buf.data(), std::min(n, 4096 - p->head.size()));
            if (!cut_marker_.empty() && &from == &p->a &&
                std::string_view(buf.data(), n).find(cut_marker_) != std::string_view::npos) {
                cut_marker_.clear();
                ++cut_on_marker_;
                close(*p);
                pairs_.remove(p);
                return;
            }
            if (p->upstream_held && &from == &p->a) {  // dropped: the target never hears it
                pump(p, from, to, buf);
                return;
            }
            boost::asio::async_write(to, boost::asio::buffer(buf.data(), n),
                                     [this, p, &from, &to, &buf](boost::system::error_code ec,
                                                                 std::size_t) {
                                         if (ec) return;
                                         pump(p, from, to, buf);
                                     });
        });
    }

    boost::asio::io_context ctx_;
    tcp::acceptor acceptor_;
    tcp::endpoint target_;
    std::list<std::shared_ptr<pair>> pairs_;
    std::atomic<std::size_t> accepted_{0};
    std::string cut_marker_;  // cut_when_sent() (relay thread only)
    std::atomic<std::size_t> cut_on_marker_{0};
    std::thread thread_;
};

}  // namespace tarry_test
