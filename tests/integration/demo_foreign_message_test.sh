#!/bin/sh
# The demo meets messages it did not publish, sent by pika: one without a
# schedule runs at once; one with an unreadable perform_job_at is
# dead-lettered with its reason, not run. The demo's own jobs all end as
# planned.
#   demo_foreign_message_test.sh PATH_TO_scheduled_jobs_demo
set -eu
q="tarry.demo.foreign.$$"
/usr/bin/python3 - "$TARRY_TEST_AMQP_URL" "$q" <<'PY'
import sys
import pika
conn = pika.BlockingConnection(pika.URLParameters(sys.argv[1]))
ch = conn.channel()
ch.queue_declare(sys.argv[2], durable=True)
ch.basic_publish("", sys.argv[2], b"no schedule", pika.BasicProperties(message_id="foreign-plain"))
ch.basic_publish("", sys.argv[2], b"bad schedule",
                 pika.BasicProperties(message_id="foreign-bad", headers={"perform_job_at": "soon"}))
conn.close()
PY
out=$("$1" --url "$TARRY_TEST_AMQP_URL" --queue "$q")
echo "$out"
echo "$out" | grep -q "run       foreign-plain  attempt 1"
echo "$out" | grep -q "dead      foreign-bad    invalid-schedule: perform_job_at"
if echo "$out" | grep -q "run       foreign-bad"; then
    echo "the message with a bad schedule was run" >&2
    exit 1
fi
echo "$out" | grep -q "6 of 6 jobs done, 1 dead-lettered (as planned: 1), 0 started early"
/usr/bin/python3 "$(dirname "$0")/../support/delete_queues.py" "$TARRY_TEST_AMQP_URL" "$q" "$q.dead"
