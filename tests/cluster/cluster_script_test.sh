#!/usr/bin/env bash
# scripts/cluster against three real RabbitMQ nodes: start, status, url, ctl,
# a quorum queue and its leader, the leader killed (its messages consumed
# through another node), the leader restarted (it rejoins), stop. About a
# minute (three nodes boot), so not part of `make test`: `make test-cluster`.
#
#   tests/cluster/cluster_script_test.sh
#
# The nodes' version comes from TARRY_TEST_RABBITMQ (3.10, the default, or
# 4.0: passed on as `scripts/cluster start --rabbitmq`).
# Prints one line per check and `N passed, N failed`; exit 0 passed,
# 1 failed, 77 skipped (no rabbitmq-server, no 4.0 root, or no pika).
# shellcheck disable=SC2317  # functions run by the trap and by check
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cluster="$root/scripts/cluster"
py=/usr/bin/python3

version=${TARRY_TEST_RABBITMQ:-3.10}
# shellcheck source-path=SCRIPTDIR/../scripts
. "$root/tests/scripts/script_checks.sh"
require_rabbitmq "$version"
require_pika

dir=$(mktemp -d "${TMPDIR:-/tmp}/tarry-cluster.XXXXXX")
cleanup() {
  "$cluster" stop "$dir" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

vms_of() {  # DIR -> pids of the Erlang VMs whose node directory is under DIR
  pgrep -f -- "-home $1" || true
}
running_count() {  # N -> running nodes in node N's cluster_status
  "$cluster" ctl "$dir" "$1" cluster_status --formatter json 2>/dev/null |
    "$py" -c 'import json, sys; print(len(json.load(sys.stdin)["running_nodes"]))'
}
queue=tarry.cluster.test

# start
t0=$SECONDS
if ! urls=$("$cluster" start "$dir" --rabbitmq "$version"); then
  bad "start"
  finish
fi
ok "start: three RabbitMQ $version nodes clustered in $((SECONDS - t0)) s"
check "start prints three distinct AMQP URLs" \
  test "$(grep -cE '^amqp://guest:guest@127\.0\.0\.1:[0-9]+/%2F$' <<<"$urls")" = 3 -a \
       "$(sort -u <<<"$urls" | wc -l)" = 3
check "start writes them to DIR/urls" test "$urls" = "$(cat "$dir/urls")"
for n in 1 2 3; do
  check "url DIR $n is line $n of the URLs" test "$("$cluster" url "$dir" $n)" = "$(sed -n "${n}p" <<<"$urls")"
done
status=$("$cluster" status "$dir"); rc=$?
check "status: exit 0 with three nodes running" test "$rc" = 0 -a "$(grep -c ' running$' <<<"$status")" = 3
check "ctl DIR 1 cluster_status: three running nodes" test "$(running_count 1)" = 3
"$cluster" start "$dir" >/dev/null 2>"$dir/start-again.err"; rc=$?
check "start on a running DIR refuses" test "$rc" != 0
check "  and says why" grep -q "is running" "$dir/start-again.err"
check "  and leaves the cluster running" quiet "$cluster" status "$dir"

# a quorum queue with five persistent messages, published through node 1
"$py" - "$("$cluster" url "$dir" 1)" "$queue" <<'PY'
import sys
import pika
conn = pika.BlockingConnection(pika.URLParameters(sys.argv[1]))
ch = conn.channel()
ch.confirm_delivery()
ch.queue_declare(sys.argv[2], durable=True, arguments={"x-queue-type": "quorum"})
for i in range(5):
    ch.basic_publish("", sys.argv[2], b"m%d" % i, pika.BasicProperties(delivery_mode=2))
conn.close()
PY
check "a quorum queue declared and five messages published through node 1" test $? = 0
leader=$("$cluster" leader "$dir" "$queue")
check "leader prints a node number ($leader)" grep -qx '[123]' <<<"$leader"
[ -n "$leader" ] || finish
"$cluster" leader "$dir" no.such.queue >/dev/null 2>&1
check "leader of a queue that does not exist fails" test $? != 0

# kill the leader
"$cluster" kill "$dir" "$leader"
check "kill DIR $leader" test $? = 0
check "  leaves no Erlang VM of node $leader" test -z "$(vms_of "$dir/n$leader/")"
status=$("$cluster" status "$dir"); rc=$?
check "status: exit non-zero, node $leader down, two running" \
  test "$rc" != 0 -a "$(grep -c ' running$' <<<"$status")" = 2 -a -n "$(grep "^node $leader: .* down$" <<<"$status")"
other=$(( leader % 3 + 1 ))
new_leader=""
for _ in $(seq 1 30); do
  new_leader=$("$cluster" leader "$dir" "$queue" 2>/dev/null)
  [ -n "$new_leader" ] && [ "$new_leader" != "$leader" ] && break
  sleep 1
done
check "another node leads the queue ($new_leader)" test -n "$new_leader" -a "$new_leader" != "$leader"
got=$("$py" - "$("$cluster" url "$dir" "$other")" "$queue" <<'PY'
import sys
import pika
conn = pika.BlockingConnection(pika.URLParameters(sys.argv[1]))
ch = conn.channel()
got = []
while True:
    method, _, body = ch.basic_get(sys.argv[2])
    if method is None:
        break
    got.append(body.decode())
    ch.basic_ack(method.delivery_tag)
conn.close()
print(" ".join(got))
PY
)
check "the five messages are consumed through node $other" test "$got" = "m0 m1 m2 m3 m4"

# restart it
t0=$SECONDS
url=$("$cluster" restart "$dir" "$leader")
check "restart DIR $leader (in $((SECONDS - t0)) s) prints its URL" test "$url" = "$("$cluster" url "$dir" "$leader")"
check "status: exit 0 again" quiet "$cluster" status "$dir"
check "node $leader sees three running nodes" test "$(running_count "$leader")" = 3
"$cluster" restart "$dir" "$leader" >/dev/null 2>&1
check "restart of a running node refuses" test $? != 0

# stop
"$cluster" stop "$dir"
check "stop" test $? = 0
check "  leaves no Erlang VM of DIR" test -z "$(vms_of "$dir/")"
"$cluster" status "$dir" >/dev/null
check "status after stop: exit non-zero" test $? != 0
check "stop again is harmless" "$cluster" stop "$dir"

finish
