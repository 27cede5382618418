#!/usr/bin/python3
"""What the broker counts when a message is given back, seen by a client
nobody here wrote (Debian's pika). tarry's delivery limit handling rests on
these facts (docs/compatibility.md); broker_facts_test.cpp checks them.

    broker_counts.py sequence AMQP_URL QUEUE quorum|classic
        declares QUEUE (durable, kept), publishes one message and consumes
        it (prefetch 1) eight times, giving it back in turn by
        basic.nack(requeue) twice, basic.reject(requeue) twice, a
        channel.close and a connection.close with it unacknowledged, a
        client basic.cancel followed by a nack, and finally acks it. Prints
        {"version": V, "deliveries": [{"x-delivery-count": N or null,
        "x-acquired-count": N or null, "redelivered": B}, ...]}.

    broker_counts.py limit AMQP_URL QUEUE nack|reject MAX
        declares QUEUE as a quorum queue without x-delivery-limit (kept),
        publishes one message, then takes it with basic.get and gives it
        back by the given method until it is gone or was taken MAX times.
        Prints {"version": V, "taken": N, "left": messages in the queue}.
"""
import json
import sys
import time

import pika

from amqp_url import url_parts


def connect(url):
    host, port, vhost, user, password = url_parts(url)
    return pika.BlockingConnection(pika.ConnectionParameters(
        host=host, port=port, virtual_host=vhost,
        credentials=pika.PlainCredentials(user, password), heartbeat=30))


def version(conn):
    v = conn._impl.server_properties.get("version")
    return v.decode() if isinstance(v, bytes) else v


def publish_one(conn, queue, arguments):
    ch = conn.channel()
    ch.queue_declare(queue, durable=True, arguments=arguments)
    ch.confirm_delivery()
    ch.basic_publish("", queue, b"counted", pika.BasicProperties(delivery_mode=2))
    ch.close()


class Consumer:
    """One consumer (prefetch 1) on a channel of its own."""

    def __init__(self, conn, queue):
        self.conn, self.got = conn, []
        self.ch = conn.channel()
        self.ch.basic_qos(prefetch_count=1)
        self.tag = self.ch.basic_consume(queue, lambda c, m, p, b: self.got.append((m, p)))

    def next(self, timeout=20.0):
        deadline = time.monotonic() + timeout
        while not self.got and time.monotonic() < deadline:
            self.conn.process_data_events(time_limit=0.1)
        if not self.got:
            raise SystemExit("no delivery within %.0f s" % timeout)
        return self.got.pop(0)


def seen(method, props):
    h = props.headers or {}
    return {"x-delivery-count": h.get("x-delivery-count"),
            "x-acquired-count": h.get("x-acquired-count"),
            "redelivered": method.redelivered}


def sequence(url, queue, kind):
    conn = connect(url)
    publish_one(conn, queue, {"x-queue-type": "quorum"} if kind == "quorum" else {})
    out = {"version": version(conn), "deliveries": []}
    c = Consumer(conn, queue)
    for give_back in ("nack", "nack", "reject", "reject", "channel.close", "connection.close",
                      "cancel then nack", "ack"):
        m, p = c.next()
        out["deliveries"].append(seen(m, p))
        if give_back == "nack":
            c.ch.basic_nack(m.delivery_tag, requeue=True)
        elif give_back == "reject":
            c.ch.basic_reject(m.delivery_tag, requeue=True)
        elif give_back == "channel.close":
            c.ch.close()
            c = Consumer(conn, queue)
        elif give_back == "connection.close":
            conn.close()
            conn = connect(url)
            c = Consumer(conn, queue)
        elif give_back == "cancel then nack":
            c.ch.basic_cancel(c.tag)
            conn.process_data_events(time_limit=1.0)
            c.ch.basic_nack(m.delivery_tag, requeue=True)
            c.ch.close()
            c = Consumer(conn, queue)
        else:
            c.ch.basic_ack(m.delivery_tag)
    c.ch.close()
    conn.close()
    print(json.dumps(out))


def limit(url, queue, how, most):
    conn = connect(url)
    publish_one(conn, queue, {"x-queue-type": "quorum"})
    ch = conn.channel()
    taken = 0
    while taken < most:
        m = None
        for _ in range(20):  # a give-back is asynchronous: look again before calling it gone
            m, _props, _body = ch.basic_get(queue, auto_ack=False)
            if m is not None:
                break
            time.sleep(0.1)
        if m is None:
            break
        taken += 1
        if how == "nack":
            ch.basic_nack(m.delivery_tag, requeue=True)
        else:
            ch.basic_reject(m.delivery_tag, requeue=True)
    ch.close()
    time.sleep(0.5)
    left = conn.channel().queue_declare(queue, passive=True).method.message_count
    print(json.dumps({"version": version(conn), "taken": taken, "left": left}))
    conn.close()


def main(argv):
    if len(argv) == 5 and argv[1] == "sequence" and argv[4] in ("quorum", "classic"):
        sequence(argv[2], argv[3], argv[4])
    elif len(argv) == 6 and argv[1] == "limit" and argv[4] in ("nack", "reject"):
        limit(argv[2], argv[3], argv[4], int(argv[5]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
