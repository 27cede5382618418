#!/usr/bin/python3
"""Publishes one poison message with Debian's pika, for tarry's interop
tests: valid AMQP 0-9-1 that tarry's codec refuses to decode, because its
headers nest tables deeper than tarry's limit (32).

    publish_poison.py --url AMQP_URL --queue QUEUE --id ID --depth N

The message goes to the default exchange with routing key QUEUE (which must
exist), message_id ID, persistent, body "poison ID", and headers
{"a": {"a": ... {"a": 1}}} nested N tables deep. Waits for the broker's
confirm, then prints one line: the properties block as pika encoded it
(property flags first), in hex, and exits 0; exit 1 on any failure, 2 on
bad arguments.
"""
import argparse
import sys

from amqp_url import url_parts


def nested(depth):
    table = {"a": 1}
    for _ in range(depth - 1):
        table = {"a": table}
    return table


def main():
    p = argparse.ArgumentParser(description="publish a message whose headers nest N tables deep")
    p.add_argument("--url", required=True)
    p.add_argument("--queue", required=True)
    p.add_argument("--id", required=True)
    p.add_argument("--depth", required=True, type=int)
    args = p.parse_args()  # exits 2 on bad arguments
    if args.depth < 1:
        p.error("--depth needs at least 1")
    try:
        import pika
        host, port, vhost, user, password = url_parts(args.url)
        properties = pika.BasicProperties(message_id=args.id, delivery_mode=2, headers=nested(args.depth))
        conn = pika.BlockingConnection(pika.ConnectionParameters(
            host=host, port=port, virtual_host=vhost,
            credentials=pika.PlainCredentials(user, password)))
        try:
            ch = conn.channel()
            ch.confirm_delivery()  # basic_publish raises on a nack or a return
            ch.basic_publish(exchange="", routing_key=args.queue, body=("poison " + args.id).encode(),
                             properties=properties, mandatory=True)
        finally:
            conn.close()
    except Exception as e:  # any client or broker failure
        print(f"publish_poison: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(b"".join(properties.encode()).hex(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
