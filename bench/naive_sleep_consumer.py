#!/usr/bin/python3
"""The naive scheduler bench/compare_bench runs tarry against: a pika
(BlockingConnection) consumer with a prefetch of PREFETCH which, in its
callback, reads the job's perform_job_at header (epoch seconds), sleeps
until then, runs the (empty) job and acknowledges it. What a team writes
first when a broker has no delayed delivery: a job due later blocks every
job behind it in the prefetch window.

    naive_sleep_consumer.py AMQP_URL QUEUE PREFETCH

Prints "ready" once it consumes, then one line a job as its handler
starts: "run MESSAGE_ID START DUE" (epoch seconds; DUE "-" when the job
has no perform_job_at). Runs until it is terminated (SIGTERM).
"""
import sys
import time

import pika

url, queue, prefetch = sys.argv[1], sys.argv[2], int(sys.argv[3])
conn = pika.BlockingConnection(pika.URLParameters(url))
ch = conn.channel()
ch.basic_qos(prefetch_count=prefetch)


def on_message(channel, method, properties, body):
    headers = properties.headers or {}
    due = headers.get("perform_job_at")
    if due is not None:
        time.sleep(max(0.0, float(due) - time.time()))
    start = time.time()
    print("run %s %.6f %s" % (properties.message_id, start, "-" if due is None else "%.6f" % float(due)),
          flush=True)
    channel.basic_ack(method.delivery_tag)


ch.basic_consume(queue, on_message)
print("ready", flush=True)
ch.start_consuming()
