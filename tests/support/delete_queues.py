#!/usr/bin/env python3
"""Deletes queues on a broker (pika), for the shell tests' clean-up:

    delete_queues.py URL QUEUE [QUEUE ...]

A queue that does not exist is no error (queue.delete is idempotent)."""
import sys

import pika


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: delete_queues.py URL QUEUE [QUEUE ...]")
    conn = pika.BlockingConnection(pika.URLParameters(sys.argv[1]))
    ch = conn.channel()
    for name in sys.argv[2:]:
        ch.queue_delete(name)
    conn.close()


if __name__ == "__main__":
    main()
