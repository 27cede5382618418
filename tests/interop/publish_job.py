#!/usr/bin/python3
"""Publishes one job with one schedule header, the way another team's
Python service would: with Debian's pika or py-amqp, for tarry's interop
tests.

    publish_job.py --client pika|pyamqp --url AMQP_URL --queue QUEUE --id ID
                   --header NAME --value V --type double|int|str|timestamp

The message goes to the default exchange with routing key QUEUE (which must
exist), message_id ID, persistent, body "job ID", and the headers table
{NAME: V} with V written as:
    double     a Python float: py-amqp sends an AMQP double 'd' (pika 1.2
               cannot encode floats, so it is refused for pika)
    int        a Python int ('I' within 32 bits, else 'l' or 'L')
    str        a string 'S'
    timestamp  V epoch seconds as a UTC datetime: an AMQP timestamp 'T'
Waits for the broker's confirm, prints `published ID` and exits 0; exit 1
on any failure, 2 on bad arguments.
"""
import argparse
import datetime
import sys

from amqp_url import url_parts


def header_value(kind, text):
    if kind == "double":
        return float(text)
    if kind == "int":
        return int(text)
    if kind == "timestamp":
        return datetime.datetime.fromtimestamp(int(text), tz=datetime.timezone.utc)
    return text


def publish_pika(args, headers):
    import pika
    host, port, vhost, user, password = url_parts(args.url)
    conn = pika.BlockingConnection(pika.ConnectionParameters(
        host=host, port=port, virtual_host=vhost,
        credentials=pika.PlainCredentials(user, password)))
    try:
        ch = conn.channel()
        ch.confirm_delivery()  # basic_publish raises on a nack or a return
        ch.basic_publish(
            exchange="", routing_key=args.queue, body=("job " + args.id).encode(),
            properties=pika.BasicProperties(message_id=args.id, delivery_mode=2, headers=headers),
            mandatory=True)
    finally:
        conn.close()


def publish_pyamqp(args, headers):
    import amqp
    host, port, vhost, user, password = url_parts(args.url)
    conn = amqp.Connection(host=f"{host}:{port}", userid=user, password=password,
                           virtual_host=vhost, confirm_publish=True)
    conn.connect()
    try:
        ch = conn.channel()
        msg = amqp.Message(("job " + args.id).encode(), message_id=args.id, delivery_mode=2,
                           application_headers=headers)
        # Waits for the confirm; a return (no such queue) raises.
        ch.basic_publish(msg, exchange="", routing_key=args.queue, mandatory=True)
        ch.close()
    finally:
        conn.close()


def main():
    p = argparse.ArgumentParser(description="publish one scheduled job with pika or py-amqp")
    p.add_argument("--client", required=True, choices=["pika", "pyamqp"])
    p.add_argument("--url", required=True)
    p.add_argument("--queue", required=True)
    p.add_argument("--id", required=True)
    p.add_argument("--header", required=True)
    p.add_argument("--value", required=True)
    p.add_argument("--type", required=True, choices=["double", "int", "str", "timestamp"])
    args = p.parse_args()  # exits 2 on bad arguments
    if args.client == "pika" and args.type == "double":
        p.error("pika 1.2 cannot encode floats: use --client pyamqp for --type double")
    try:
        headers = {args.header: header_value(args.type, args.value)}
    except ValueError as e:
        p.error(f"--value {args.value!r} is not a {args.type}: {e}")
    try:
        (publish_pika if args.client == "pika" else publish_pyamqp)(args, headers)
    except Exception as e:  # any client or broker failure
        print(f"publish_job: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(f"published {args.id}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
