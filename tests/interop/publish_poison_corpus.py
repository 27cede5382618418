#!/usr/bin/python3
"""Publishes the poison corpus with Debian's pika, for tarry's interop test
(tests/interop/poison_corpus_test.cpp): every kind of awkward message a
client can publish and RabbitMQ delivers, each with a name, then one
ordinary job.

    publish_poison_corpus.py --url AMQP_URL --queue QUEUE --at EPOCH_S [--large-body-mib N]

Every message goes to the default exchange with routing key QUEUE (which
must exist), mandatory, on one confirm channel, in the order of corpus().
Its message_id is "corpus-NAME" unless the entry says otherwise; its body
is "job NAME" unless the entry says otherwise. EPOCH_S (whole seconds) is
the due time the scheduled entries name, in their own encodings. Output:
first `frame_max N` (what pika and the broker agreed; the near-frame_max
entries fill a content header frame of exactly that size), then one line
per message, `NAME SENT_US CONFIRMED_US` (microseconds since the epoch just
before the publish and when its confirm came). Exit 0 when every message
was confirmed; 1 on any failure (the reason on stderr), 2 on bad arguments.

The entries:
- deep nesting: headers nested 32 tables deep (tarry's limit: it runs), 33
  deep (one beyond: unreadable), and 33 deep through arrays;
- near frame_max: properties whose content header frame is exactly
  frame_max bytes, due now, due at EPOCH_S, and with a malformed
  perform_job_at (its dead letter, which adds tarry's headers, cannot fit);
- invalid UTF-8 in short strings (content_type, message_id, a header name)
  and in long strings (a header's value, perform_job_at);
- perform_job_at as every field type pika can produce: boolean `t`, int32
  `I`, int64 `l` (and its largest value, and a negative one), decimal `D`
  (EPOCH_S, a time in 1970, scale 31), long string `S` (RFC 3339, decimal
  number, garbage, invalid UTF-8), byte array `x`, array `A`, timestamp
  `T`, table `F`, void `V`;
- x-delay: negative, int64's largest, a decimal string beyond int64, above
  the consumer's max_delay (120000 ms; the test sets 60000), the strings
  "1000" and "abc", and a decimal;
- an empty body, and a body of N MiB, `body-<N>mib` (transient, so the
  broker does not write it to disk; N is 100 unless --large-body-mib says
  otherwise: the test asks for 16 on RabbitMQ 4, whose largest message is
  16 MiB by default, where 3.10 takes 128 MiB);
- then `last`, an ordinary job with no headers.

What pika 1.2 cannot send, and so is not here (tarry's unit tests cover it
on the consumer core and the schedule contract): the integer types `b`,
`B`, `s`, `u`, `i` (pika writes every int as `I` or `l`), the float `f`
and double `d` (pika refuses a Python float in a table), and so NaN and
infinities. RabbitMQ itself refuses a few inputs, so no consumer ever sees
them: a NaN or infinite double in a table (it closes the publishing
connection, 541) and an `expiration` that is not a decimal number (it
closes the channel, 406).
"""
import argparse
import datetime
import decimal
import sys
import time

from amqp_url import url_parts

# RabbitMQ's limit on a content header frame is the whole frame: 7 bytes of
# frame header and the end octet around the payload, whose first 12 bytes
# are class id, weight and body size, then the properties (flags first).
FRAME_OVERHEAD = 8
CONTENT_HEADER_FIXED = 12


class raw_text(str):
    """A str that pika encodes as the given bytes: pika writes a long string
    `S` with value.encode("utf-8"), so this is how bytes that are not UTF-8
    travel as a long string through pika's own encoder."""

    def __new__(cls, raw):
        text = super().__new__(cls, raw.decode("latin-1"))
        text.raw = raw
        return text

    def encode(self, *args, **kwargs):
        return self.raw


def nested_tables(depth):
    """{"a": {"a": ... {"a": 1}}}: `depth` tables, the headers table included."""
    table = {"a": 1}
    for _ in range(depth - 1):
        table = {"a": table}
    return table


def nested_arrays(depth):
    """{"a": [[...[1]...]]}: the headers table and depth - 1 arrays."""
    value = [1]
    for _ in range(depth - 2):
        value = [value]
    return {"a": value}


def rfc3339(epoch_s, millis):
    t = datetime.datetime.fromtimestamp(epoch_s, tz=datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % millis


def filled_to_frame(pika, frame_max, name, headers):
    """Properties for NAME with `headers` and a "pad" header sized so that
    the content header frame is exactly frame_max bytes."""
    def props(pad):
        return pika.BasicProperties(message_id="corpus-" + name, delivery_mode=2,
                                    headers=dict(headers, pad=pad))
    room = frame_max - FRAME_OVERHEAD - CONTENT_HEADER_FIXED
    used = len(b"".join(props("").encode()))
    return props("p" * (room - used))


def corpus(pika, at, frame_max, large_body_mib):
    """(name, properties, body) of every message, in publishing order."""
    long = pika.compat.long  # pika writes it as `l`, any int within 32 bits as `I`
    entries = []

    def add(name, headers=None, body=None, **props):
        props.setdefault("message_id", "corpus-" + name)
        props.setdefault("delivery_mode", 2)
        entries.append((name, pika.BasicProperties(headers=headers, **props),
                        body if body is not None else ("job " + name).encode()))

    def add_props(name, properties):
        entries.append((name, properties, ("job " + name).encode()))

    add("deep-32", nested_tables(32))
    add("deep-33", nested_tables(33))
    add("deep-arrays-33", nested_arrays(33))

    add_props("frame-max-now", filled_to_frame(pika, frame_max, "frame-max-now", {}))
    add_props("frame-max-held", filled_to_frame(pika, frame_max, "frame-max-held", {"perform_job_at": at}))
    add_props("frame-max-bad-schedule",
              filled_to_frame(pika, frame_max, "frame-max-bad-schedule", {"perform_job_at": "garbage"}))

    add("utf8-content-type", content_type=b"text/\xff\xfeplain")
    add("utf8-message-id", message_id=b"corpus-utf8-message-id-\xc3\x28\xff")
    add("utf8-header-name", {b"name-\xff\xc0": 1})
    add("utf8-long-string", {"note": raw_text(b"caf\xe9 \xed\xa0\x80 \xf8\x88\x80\x80\x80")})
    add("utf8-perform-job-at", {"perform_job_at": raw_text(b"\xff\xfe2026")})
    add("utf8-message-id-dead", {"perform_job_at": "garbage"}, message_id=b"corpus-dead-\xff")

    add("pja-bool", {"perform_job_at": True})
    add("pja-int32", {"perform_job_at": at})
    add("pja-int64", {"perform_job_at": long(at)})
    add("pja-int64-max", {"perform_job_at": long(2**63 - 1)})
    add("pja-negative", {"perform_job_at": -5})
    add("pja-decimal", {"perform_job_at": decimal.Decimal(at)})
    add("pja-decimal-1970", {"perform_job_at": decimal.Decimal("1.5")})
    add("pja-decimal-scale-31", {"perform_job_at": decimal.Decimal("1E-31")})
    add("pja-rfc3339", {"perform_job_at": rfc3339(at, 250)})
    add("pja-number-string", {"perform_job_at": "%d.5" % at})
    add("pja-garbage", {"perform_job_at": "next tuesday"})
    add("pja-bytes", {"perform_job_at": b"\x01\x02"})
    add("pja-array", {"perform_job_at": [at]})
    add("pja-timestamp", {"perform_job_at": datetime.datetime.fromtimestamp(at, tz=datetime.timezone.utc)})
    add("pja-table", {"perform_job_at": {"at": at}})
    add("pja-void", {"perform_job_at": None})

    add("xd-negative", {"x-delay": -1000})
    add("xd-int64-max", {"x-delay": long(2**63 - 1)})
    add("xd-beyond-int64", {"x-delay": "99999999999999999999999"})
    add("xd-over-max-delay", {"x-delay": 120000})
    add("xd-string", {"x-delay": "1000"})
    add("xd-garbage", {"x-delay": "abc"})
    add("xd-decimal", {"x-delay": decimal.Decimal("1500.5")})

    add("body-empty", body=b"")
    add(f"body-{large_body_mib}mib", body=b"b" * (large_body_mib << 20), delivery_mode=1)

    add("last")
    return entries


def main():
    p = argparse.ArgumentParser(description="publish tarry's poison corpus with pika")
    p.add_argument("--url", required=True)
    p.add_argument("--queue", required=True)
    p.add_argument("--at", required=True, type=int, help="the due time, whole epoch seconds")
    p.add_argument("--large-body-mib", type=int, default=100, help="the large body's size in MiB")
    args = p.parse_args()  # exits 2 on bad arguments
    try:
        import pika
        host, port, vhost, user, password = url_parts(args.url)
        conn = pika.BlockingConnection(pika.ConnectionParameters(
            host=host, port=port, virtual_host=vhost,
            credentials=pika.PlainCredentials(user, password)))
        try:
            # What the tune settled on (BlockingConnection has no public accessor).
            frame_max = conn._impl.params.frame_max
            print(f"frame_max {frame_max}", flush=True)
            ch = conn.channel()
            ch.confirm_delivery()  # basic_publish raises on a nack or a return
            for name, properties, body in corpus(pika, args.at, frame_max, args.large_body_mib):
                sent = time.time_ns() // 1000
                try:
                    ch.basic_publish(exchange="", routing_key=args.queue, body=body,
                                     properties=properties, mandatory=True)
                except Exception as e:
                    raise RuntimeError(f"{name}: {type(e).__name__}: {e}") from e
                print(f"{name} {sent} {time.time_ns() // 1000}", flush=True)
        finally:
            if conn.is_open:
                conn.close()
    except Exception as e:  # any client or broker failure
        print(f"publish_poison_corpus: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
