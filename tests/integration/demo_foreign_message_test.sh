#!/bin/sh
# The demo meets a message it did not publish (no perform_job_at): it must
# reject it with a line saying why, and still run its own six jobs.
#   demo_foreign_message_test.sh PATH_TO_scheduled_jobs_demo
set -eu
q="tarry.demo.foreign.$$"
/usr/bin/python3 - "$TARRY_TEST_AMQP_URL" "$q" <<'PY'
import sys
import pika
conn = pika.BlockingConnection(pika.URLParameters(sys.argv[1]))
ch = conn.channel()
ch.queue_declare(sys.argv[2], auto_delete=True)
ch.basic_publish("", sys.argv[2], b"no schedule", pika.BasicProperties(message_id="foreign"))
conn.close()
PY
out=$("$1" --url "$TARRY_TEST_AMQP_URL" --queue "$q")
echo "$out"
echo "$out" | grep -q "rejected  foreign .*without a double perform_job_at"
echo "$out" | grep -q "6 of 6 jobs done, 0 started early"
