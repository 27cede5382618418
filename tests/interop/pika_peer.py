#!/usr/bin/python3
"""A peer nobody here wrote, for tarry's interop tests: Debian's pika.

    pika_peer.py publish AMQP_URL QUEUE
        declares QUEUE (durable: RabbitMQ 4.x denies transient non-exclusive
        queues; kept), publishes one message with all
        14 basic properties and a headers table of every type pika can
        write, and prints {"published": true} once the broker confirmed it.

    pika_peer.py read AMQP_URL QUEUE
        waits (at most 30 s) for one message on QUEUE, acks it and prints
        its properties, headers and body as JSON, with each header value
        tagged by the Python type pika decoded it to.
"""
import base64
import datetime
import decimal
import json
import sys
import time
import urllib.parse

import pika


def params(url):
    u = urllib.parse.urlparse(url)
    vhost = urllib.parse.unquote(u.path[1:]) if len(u.path) > 1 else "/"
    return pika.ConnectionParameters(
        host=u.hostname, port=u.port or 5672, virtual_host=vhost,
        credentials=pika.PlainCredentials(urllib.parse.unquote(u.username or "guest"),
                                          urllib.parse.unquote(u.password or "guest")),
        heartbeat=30)


def tagged(v):
    """A JSON-able description of a decoded header value and its type."""
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": v}
    if isinstance(v, float):
        return {"float": v}
    if isinstance(v, decimal.Decimal):
        return {"decimal": str(v)}
    if isinstance(v, datetime.datetime):
        return {"timestamp": int(v.replace(tzinfo=datetime.timezone.utc).timestamp())}
    if isinstance(v, bytes):
        return {"bytes": base64.b16encode(v).decode().lower()}
    if isinstance(v, str):
        return {"str": v}
    if isinstance(v, dict):
        return {"table": {k: tagged(x) for k, x in v.items()}}
    if isinstance(v, list):
        return {"array": [tagged(x) for x in v]}
    if v is None:
        return {"void": None}
    return {"unknown": repr(v)}


def publish(url, queue):
    conn = pika.BlockingConnection(params(url))
    ch = conn.channel()
    ch.confirm_delivery()
    ch.queue_declare(queue, durable=True, auto_delete=False)
    props = pika.BasicProperties(
        content_type="application/json", content_encoding="gzip",
        headers={
            "perform_job_at": 1767225600,               # I
            "big": 2 ** 40,                             # l
            "negative": -123456,                        # I
            "flag": True,                               # t
            "name": "p\u00e9ka",                        # S (UTF-8)
            "price": decimal.Decimal("12.34"),          # D
            "when": datetime.datetime(2026, 1, 1, 0, 0, 0),  # T
            "raw": b"\x00\x01\xfe",                     # x
            "nothing": None,                            # V
            "nested": {"a": 1, "b": "two", "deeper": {"c": False}},  # F
            "list": [1, "x", False, {"k": "v"}],        # A
        },
        delivery_mode=2, priority=7, correlation_id="corr-42", reply_to="reply.q",
        expiration="3600000", message_id="msg-42", timestamp=1767225601, type="job.kind",
        user_id="guest", app_id="pika-peer", cluster_id="c-9")
    ch.basic_publish("", queue, b"body from pika \x00\xff", props)
    conn.close()
    print(json.dumps({"published": True}))


def read(url, queue):
    conn = pika.BlockingConnection(params(url))
    ch = conn.channel()
    deadline = time.time() + 30
    while True:
        method, p, body = ch.basic_get(queue)
        if method is not None:
            break
        if time.time() > deadline:
            print(json.dumps({"error": "no message within 30 s"}))
            sys.exit(1)
        time.sleep(0.05)
    ch.basic_ack(method.delivery_tag)
    out = {
        "body": base64.b16encode(body).decode().lower(),
        "routing_key": method.routing_key,
        "content_type": p.content_type, "content_encoding": p.content_encoding,
        "delivery_mode": p.delivery_mode, "priority": p.priority,
        "correlation_id": p.correlation_id, "reply_to": p.reply_to,
        "expiration": p.expiration, "message_id": p.message_id,
        "timestamp": p.timestamp, "type": p.type, "user_id": p.user_id,
        "app_id": p.app_id, "cluster_id": p.cluster_id,
        "headers": {k: tagged(v) for k, v in (p.headers or {}).items()},
    }
    conn.close()
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    mode, url, queue = sys.argv[1], sys.argv[2], sys.argv[3]
    {"publish": publish, "read": read}[mode](url, queue)
