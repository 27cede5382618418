#!/usr/bin/python3
"""Records a real AMQP 0-9-1 conversation between Debian's py-amqp and a
RabbitMQ broker, for the golden-bytes test of tarry's codec.

    capture_conversation_pyamqp.py AMQP_URL OUT_FILE

Same relay and line format as capture_conversation.py (`C <hex>` client to
server, `S <hex>` server to client, one forwarded chunk a line). py-amqp
writes field values pika cannot: a Python float as an AMQP double 'd', a
Decimal as 'D', a datetime as 'T', None as 'V', and an int beyond 32 bits
as 'L' (which tarry reads and writes back as 'l'); it logs in with
AMQPLAIN and takes the server's frame_max whatever it asked for (so bodies
are not split here; the pika capture covers that). It publishes one message
with such headers (confirmed), gets it back with basic.get, acks it and
closes.
"""
import datetime
import decimal
import sys
import urllib.parse

from conversation_recorder import ConversationRecorder

import amqp

url = urllib.parse.urlparse(sys.argv[1])
out_path = sys.argv[2]
rec = ConversationRecorder(url.hostname, url.port)
relay_port = rec.port

conn = amqp.Connection(
    host=f"127.0.0.1:{relay_port}", userid=url.username or "guest",
    password=url.password or "guest", heartbeat=30,
    confirm_publish=True)  # publish waits for the broker's ack, so get finds it
conn.connect()
ch = conn.channel()
q = "tarry.golden.pyamqp"
ch.queue_declare(q, durable=False, auto_delete=False)
headers = {
    "perform_job_at": 1767225600.25,                  # 'd'
    "price": decimal.Decimal("12.345"),               # 'D' scale 3, 12345
    "created": datetime.datetime(2026, 1, 1, 0, 0, 0,
                                 tzinfo=datetime.timezone.utc),  # 'T'
    "raw": b"\x00\xff\xfe-bytes",                     # 'S' (not UTF-8)
    "none": None,                                     # 'V'
    "big": 2**40,                                     # 'L'
    "attempt": 3,                                     # 'I'
    "retry": {"delays": [1.5, 3, "x", {"deep": [True, None]}], "ok": False},
}
msg = amqp.Message(b"py-amqp " + b"y" * 300, content_type="application/json",
                   delivery_mode=2, message_id="py-1", timestamp=1767225600,
                   application_headers=headers)
ch.basic_publish(msg, exchange="", routing_key=q)
got = ch.basic_get(q)
ch.basic_ack(got.delivery_tag)
ch.queue_delete(q)
ch.close()
conn.close()
rec.save(out_path, "py-amqp")
