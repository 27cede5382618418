#!/usr/bin/python3
"""Records a real AMQP 0-9-1 conversation between Debian's pika and a
RabbitMQ broker, for the golden-bytes test of tarry's codec.

    capture_conversation.py AMQP_URL OUT_FILE

A loopback TCP relay sits between pika and the broker and writes every
chunk it forwards as one line, `C <hex>` (client to server) or `S <hex>`
(server to client). pika declares a queue, publishes messages with all
properties and a headers table of many types, gets one, consumes one, acks,
rejects, nacks, and closes cleanly, so the capture holds most of what a
client and RabbitMQ say to each other.
"""
import sys
import urllib.parse

from conversation_recorder import ConversationRecorder

import pika

url = urllib.parse.urlparse(sys.argv[1])
out_path = sys.argv[2]
rec = ConversationRecorder(url.hostname, url.port)
relay_port = rec.port

params = pika.ConnectionParameters(
    host="127.0.0.1", port=relay_port,
    credentials=pika.PlainCredentials(url.username or "guest", url.password or "guest"),
    heartbeat=30, frame_max=4096)  # small frames: bodies split into many
conn = pika.BlockingConnection(params)
ch = conn.channel()
ch.confirm_delivery()
q = "tarry.golden"
ch.queue_declare(q, durable=False, auto_delete=False,
                 arguments={"x-max-length": 100, "x-queue-mode": "default"})
ch.exchange_declare("tarry.golden.x", exchange_type="topic", auto_delete=True)
ch.queue_bind(q, "tarry.golden.x", routing_key="job.#")
props = pika.BasicProperties(
    content_type="application/json", content_encoding="identity",
    headers={"perform_job_at": 1767225600, "attempt": 1, "name": "golden",
             "flag": True, "nested": {"a": 1, "b": "two"}, "list": [1, "x", False],
             "big": 2**40, "neg": -5},
    delivery_mode=2, priority=3, correlation_id="corr-1", reply_to="replies",
    expiration="60000", message_id="msg-1", timestamp=1767225600, type="job",
    user_id="guest", app_id="capture", cluster_id="c1")
ch.basic_publish("tarry.golden.x", "job.golden", b'{"hello":"world"}', props)
ch.basic_publish("", q, b"", pika.BasicProperties())
ch.basic_publish("", q, b"x" * 10000, pika.BasicProperties(message_id="big"))
ch.basic_qos(prefetch_count=10)
method, _, _ = ch.basic_get(q)
ch.basic_ack(method.delivery_tag)
for method, _, _ in ch.consume(q, inactivity_timeout=2):
    if method is None:
        break
    if method.delivery_tag % 2:
        ch.basic_nack(method.delivery_tag, requeue=False)
    else:
        ch.basic_reject(method.delivery_tag, requeue=False)
ch.cancel()
ch.queue_purge(q)
ch.queue_unbind(q, "tarry.golden.x", routing_key="job.#")
ch.queue_delete(q)
ch.exchange_delete("tarry.golden.x")
ch.close()
conn.close()
rec.save(out_path, "pika")
