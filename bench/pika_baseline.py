#!/usr/bin/python3
"""Baseline for bench/amqp_client_bench: the same two loops with Debian's
pika (BlockingConnection), on the same broker.

    pika_baseline.py AMQP_URL MESSAGES BODY_BYTES

Prints one JSON line: {"publish_confirm_per_s": ..., "consume_ack_per_s": ...}.
Publishing uses pika's confirm mode (each basic_publish waits for its
confirm, as pika's blocking API does); consuming uses basic_consume with
prefetch 1000 and one basic_ack per message.
"""
import json
import sys
import time
import uuid

import pika

url, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
conn = pika.BlockingConnection(pika.URLParameters(url))
ch = conn.channel()
q = "tarry-bench-pika-" + uuid.uuid4().hex
ch.queue_declare(q, exclusive=True)
ch.confirm_delivery()
body = b"x" * size

t0 = time.monotonic()
for _ in range(n):
    ch.basic_publish("", q, body)
publish_rate = n / (time.monotonic() - t0)

ch.basic_qos(prefetch_count=1000)
got = 0
t0 = time.monotonic()


def on_message(channel, method, properties, payload):
    global got
    channel.basic_ack(method.delivery_tag)
    got += 1
    if got == n:
        channel.stop_consuming()


ch.basic_consume(q, on_message)
ch.start_consuming()
consume_rate = n / (time.monotonic() - t0)
conn.close()
print(json.dumps({"publish_confirm_per_s": publish_rate, "consume_ack_per_s": consume_rate}))
