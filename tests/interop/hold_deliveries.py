"""Holds deliveries unacknowledged for a broker fact of tests/cluster.

    hold_deliveries.py URL QUEUE N consume|cancel

Consumes QUEUE with prefetch N until it holds N deliveries, cancels its
consumer when asked (`cancel`), prints `holding N consuming|cancelled` and
then holds them, unacknowledged, until it is killed.
"""
import sys
import time

import pika


def main():
    url, queue, n, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    if mode not in ("consume", "cancel"):
        sys.exit("the mode is consume or cancel, not " + mode)
    conn = pika.BlockingConnection(pika.URLParameters(url))
    ch = conn.channel()
    ch.basic_qos(prefetch_count=n)
    held = []
    tag = ch.basic_consume(queue, lambda _ch, m, _p, _b: held.append(m.delivery_tag))
    while len(held) < n:
        conn.process_data_events(time_limit=1)
    if mode == "cancel":
        ch.basic_cancel(tag)
    print("holding", len(held), "cancelled" if mode == "cancel" else "consuming", flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
