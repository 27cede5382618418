// Everything a connection needs to know before it connects.
//
// A plain value: copy it, build it by hand or from a URL (url.hpp). Each
// field says its default, its unit and what 0 means. The defaults are safe
// for production: heartbeats on, peer verification on for TLS, reconnects
// with exponential backoff and jitter (and at a steady 250 ms while the
// broker refuses connections, so a restarted broker is found at once).
// Several addresses (the nodes of a cluster) make the connection fail over
// between them: see `failover`.
#pragma once

#include "tarry/amqp/wire/limits.hpp"
#include "tarry/retry/backoff.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace tarry::amqp {

/// One broker address: a cluster node to connect to.
struct broker_address {
    /// Host name or address.
    std::string host;
    /// TCP port. 0 (default) means 5672, or 5671 when connection_config::tls.
    std::uint16_t port = 0;
};

/// TLS settings, used when connection_config::tls is true.
struct tls_config {
    /// Verify the broker's certificate chain and host name. Default true.
    /// Turning it off makes the connection open to a man in the middle.
    bool verify_peer = true;
    /// PEM file of trusted CA certificates. Empty (default): the system's
    /// default trust store.
    std::string ca_file;
    /// Client certificate and key (PEM) for brokers that ask for one. Empty
    /// (default): none.
    ///@{
    std::string cert_file;
    std::string key_file;
    ///@}
    /// Name sent in SNI and checked against the certificate. Empty
    /// (default): the host being connected to, so each address of a cluster
    /// (connection_config::failover) is checked against its own host name.
    /// When set, every address is checked against this one name.
    std::string server_name;
};

/// Everything a connection needs before it connects: a plain value, each
/// field with its default, its unit and what 0 means (see this header's
/// opening comment).
struct connection_config {
    /// Broker host name or address. Default "localhost".
    std::string host = "localhost";
    /// TCP port. 0 (default) means 5672, or 5671 when tls is true.
    std::uint16_t port = 0;
    /// Further addresses of the same broker (the other nodes of a cluster),
    /// tried in turn after host:port. Default empty. Credentials, vhost and
    /// TLS settings are shared; TLS checks each address's certificate
    /// against that address's own host (unless tls_options.server_name is
    /// set). The first connect tries each address once, in order; a
    /// reconnect starts at the address after the one lost, then goes
    /// round-robin (reconnect_backoff and refused_reconnect_interval say
    /// when). connection_timeout bounds each attempt on its own.
    std::vector<broker_address> failover;
    /// Use TLS (amqps). Default false.
    bool tls = false;
    /// TLS settings, used when tls is true.
    tls_config tls_options;

    /// PLAIN credentials. Default guest / guest (RabbitMQ accepts them only
    /// from loopback unless configured otherwise).
    ///@{
    std::string username = "guest";
    std::string password = "guest";
    ///@}
    /// Virtual host. Default "/".
    std::string vhost = "/";

    /// Heartbeat interval we ask for, in seconds. Default 60. The connection
    /// uses the smaller of this and the broker's proposal (the broker's 0 =
    /// ours). 0 turns heartbeats off: a dead peer is then noticed only by
    /// TCP, which can take hours. With heartbeats on, a heartbeat is sent
    /// when nothing was sent for half an interval, and a connection that
    /// receives nothing for two intervals is declared dead
    /// (errc::heartbeat_timeout).
    std::uint16_t heartbeat = 60;
    /// Largest frame we accept and send, in bytes, header and end octet
    /// included. Default 131072. The smaller of this and the broker's
    /// proposal is used; 0 = the broker's. Values below 4096 are raised to
    /// 4096, the protocol minimum.
    std::uint32_t frame_max = 131072;
    /// Highest channel number. Default 2047. The smaller of this and the
    /// broker's proposal is used; 0 = the broker's (65535 if it has none).
    std::uint16_t channel_max = 2047;

    /// Bound on resolving, TCP connect, TLS handshake and the AMQP handshake
    /// together, in milliseconds. Default 30 s. 0 = no bound (not
    /// recommended: a broker that accepts but never answers hangs the
    /// connect).
    std::chrono::milliseconds connection_timeout{30000};
    /// Bound on waiting for the broker's answer to our connection.close or
    /// channel.close. Default 5 s; 0 = no bound. On expiry the socket is
    /// closed anyway.
    std::chrono::milliseconds close_timeout{5000};

    /// Reconnect after an open connection is lost. Default true. The first
    /// connect is never retried: async_connect reports its failure (after
    /// trying each address once, when there are several).
    bool reconnect = true;
    /// Delays between reconnect attempts after every failure but a refused
    /// TCP connect (below): the loss itself, resolve errors, timeouts, TLS
    /// or AMQP handshakes that fail (authentication refused included), a
    /// close by the broker. Attempt n = the n-th such failure in a row;
    /// refused connects in between do not count towards it. Its limits
    /// (max_attempts, max_total) count every failure in a row, refused ones
    /// included, from the loss of the connection. Default: 100 ms doubling
    /// to 30 s, full jitter, unlimited attempts
    /// (retry::backoff_policy::reconnect_defaults()).
    retry::backoff_policy reconnect_backoff = retry::backoff_policy::reconnect_defaults();
    /// Delay before the next reconnect attempt after one whose TCP connect
    /// was refused (ECONNREFUSED: nothing listens on the port, as while the
    /// broker restarts), every time, without growing: the connection is back
    /// within this interval of the broker accepting connections again.
    /// With several addresses, a refused attempt moves on to the next
    /// address at once, and this pause comes only after every address
    /// refused in a row. Default 250 ms. 0 = a refused connect waits
    /// reconnect_backoff like any other failure (and does not move on at
    /// once).
    std::chrono::milliseconds refused_reconnect_interval{250};

    /// Shown by the broker's management UI and rabbitmqctl
    /// (client property connection_name). Default empty: not sent.
    std::string connection_name;

    /// Largest message body accepted from the broker, in bytes. Default
    /// 512 MiB. A larger one is read and dropped frame by frame, never
    /// buffered, and its delivery arrives unreadable (delivery::unreadable,
    /// body empty); the connection goes on. 0 = the default.
    std::uint64_t max_body_size = wire::default_max_body_size;

    /// The port actually used: `port`, or the scheme's default.
    std::uint16_t effective_port() const noexcept { return effective_port(port); }
    /// `p`, or the scheme's default when 0.
    std::uint16_t effective_port(std::uint16_t p) const noexcept {
        return p != 0 ? p : (tls ? std::uint16_t{5671} : std::uint16_t{5672});
    }
    /// Every address in the order they are tried: host:port, then failover,
    /// each with its effective port (never 0).
    std::vector<broker_address> addresses() const {
        std::vector<broker_address> all;
        all.reserve(1 + failover.size());
        all.push_back({host, effective_port()});
        for (const auto& a : failover) all.push_back({a.host, effective_port(a.port)});
        return all;
    }
};

}  // namespace tarry::amqp
