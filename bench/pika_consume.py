#!/usr/bin/python3
"""Baseline for bench/consumer_bench (T, throughput): Debian's pika
(BlockingConnection) consuming a queue the benchmark filled beforehand.

    pika_consume.py AMQP_URL QUEUE MESSAGES PREFETCH

basic_consume with manual acks (one basic_ack per message) and the given
prefetch; the rate is measured from the first delivery to the last ack, as
for tarry. Prints one JSON line: {"consume_ack_per_s": ...}.
"""
import json
import sys
import time

import pika

url, queue, n, prefetch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
conn = pika.BlockingConnection(pika.URLParameters(url))
ch = conn.channel()
ch.basic_qos(prefetch_count=prefetch)
got = 0
first = last = None


def on_message(channel, method, properties, body):
    global got, first, last
    if first is None:
        first = time.monotonic()
    channel.basic_ack(method.delivery_tag)
    got += 1
    if got == n:
        last = time.monotonic()
        channel.stop_consuming()


ch.basic_consume(queue, on_message)
# Bounded: give up after 120 s without finishing.
conn.call_later(120, ch.stop_consuming)
ch.start_consuming()
conn.close()
if got < n:
    sys.exit("pika_consume.py: only %d of %d messages in 120 s" % (got, n))
print(json.dumps({"consume_ack_per_s": n / (last - first)}))
