#!/usr/bin/env bash
# scripts/cluster start --netns against three real RabbitMQ nodes, each in a
# network namespace of its own: start, one cluster, messages through each
# node's URL, node 2 cut off from the others (it drops out of their
# cluster_status within net_ticktime; pause_minority pauses it), heal (it
# comes back), node 3 cut off from the clients too (a new connection
# fails), heal, node 1's VM paused and resumed, stop: no namespace, link or
# epmd of the cluster left. About a minute, so not part of `make test`:
# `make test-cluster` (and meson suite `cluster`).
#
#   tests/cluster/netns_script_test.sh
#
# The nodes' version comes from TARRY_TEST_RABBITMQ (3.10, the default, or
# 4.0: passed on as `scripts/cluster start --rabbitmq`).
# Prints one line per check and `N passed, N failed`; exit 0 passed,
# 1 failed, 77 skipped (no rabbitmq-server, no 4.0 root, no pika, no `ip`,
# or not root).
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
if ! command -v ip >/dev/null; then
  echo "skipped: the ip command is not installed (iproute2: scripts/install-deps)"
  exit 77
fi
if [ "$(id -u)" != 0 ]; then
  echo "skipped: network namespaces need root"
  exit 77
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/tarry-netns.XXXXXX")
cleanup() {
  "$cluster" stop "$dir" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

netns_names() { ip netns list | awk '{ print $1 }' | sort; }
link_names() { ip -o link | awk -F': ' '{ sub(/@.*/, "", $2); print $1 ": " $2 }' | sort; }
vms_of() {  # DIR -> pids of the Erlang VMs whose node directory is under DIR
  pgrep -f -- "-home $1" || true
}
rec() { sed -n "s/^$1=//p" "$dir/netns"; }  # KEY -> its value in DIR/netns
running_nodes() {  # N -> the running nodes in node N's cluster_status, one a line ("" when it does not answer)
  timeout 30 "$cluster" ctl "$dir" "$1" cluster_status --timeout 20 --formatter json 2>/dev/null |
    "$py" -c 'import json, sys; print("\n".join(json.load(sys.stdin)["running_nodes"]))' 2>/dev/null
}
sees() {  # N NODE_NAME -> exit 0 when node N's cluster_status lists NODE_NAME as running
  running_nodes "$1" | grep -qxF "$2"
}
all_three_everywhere() {  # exit 0 when each node lists three running nodes
  local n
  for n in 1 2 3; do [ "$(running_nodes "$n" | wc -l)" = 3 ] || return 1; done
}
tcp_connects() {  # ADDR -> exit 0 when a new TCP connection to ADDR:5672 is accepted within 5 s
  "$py" - "$1" <<'PY'
import socket, sys
try:
    socket.create_connection((sys.argv[1], 5672), timeout=5).close()
except OSError:
    sys.exit(1)
PY
}
amqp_connects() {  # URL -> exit 0 when an AMQP connection opens within 5 s
  "$py" - "$1" <<'PY'
import sys
import pika
p = pika.URLParameters(sys.argv[1])
p.socket_timeout = 5
p.blocked_connection_timeout = 5
p.connection_attempts = 1
try:
    pika.BlockingConnection(p).close()
except Exception:
    sys.exit(1)
PY
}
wait_for() {  # SECONDS COMMAND... -> exit 0 once COMMAND does (polled each second), 1 after SECONDS
  local limit=$1 t0=$SECONDS; shift
  until "$@"; do
    [ $((SECONDS - t0)) -lt "$limit" ] || return 1
    sleep 1
  done
}

netns_before=$(netns_names)
links_before=$(link_names)

# start
t0=$SECONDS
if ! urls=$("$cluster" start "$dir" --netns --rabbitmq "$version"); then
  bad "start --netns"
  finish
fi
ok "start --netns: three RabbitMQ $version nodes in network namespaces clustered in $((SECONDS - t0)) s"
prefix=$(rec subnet | sed -n 's|^\(10\.213\.[0-9]*\)\.0/24$|\1|p')
check "DIR/netns records a /24 of 10.213.0.0/16 ($(rec subnet))" test -n "$prefix"
check "start prints the three nodes' URLs on their namespaces' addresses" \
  test "$urls" = "$(printf 'amqp://guest:guest@%s.%s:5672/%%2F\n' "$prefix" 11 "$prefix" 12 "$prefix" 13)"
check "start writes them to DIR/urls" test "$urls" = "$(cat "$dir/urls")"
for n in 1 2 3; do
  check "url DIR $n is line $n of the URLs" test "$("$cluster" url "$dir" $n)" = "$(sed -n "${n}p" <<<"$urls")"
done
names_ok=1
for key in bridge veth1 veth2 veth3 peer1 peer2 peer3; do
  name=$(rec "$key") where=()
  case $key in peer*) where=(-n "$(rec "ns${key#peer}")") ;; esac  # the namespace's end
  if [ -z "$name" ] || [ ${#name} -gt 15 ] || ! quiet ip ${where[@]+"${where[@]}"} -o link show "$name"; then
    names_ok=""
  fi
done
for n in 1 2 3; do quiet ip netns pids "$(rec "ns$n")" || names_ok=""; done
check "the bridge, veths and namespaces DIR/netns names exist (links of at most 15 characters)" test -n "$names_ok"
check "the bridge has $prefix.1" grep -qF " $prefix.1/24 " <<<"$(ip -o -4 addr show dev "$(rec bridge)")"
status=$("$cluster" status "$dir"); rc=$?
check "status: exit 0 with three nodes running" test "$rc" = 0 -a "$(grep -c ' running$' <<<"$status")" = 3
for n in 1 2 3; do
  check "node $n is rabbit@$prefix.$((10 + n)) and sees three running nodes" \
    test "$(running_nodes "$n" | sort | tr '\n' ' ')" = "rabbit@$prefix.11 rabbit@$prefix.12 rabbit@$prefix.13 "
done
for n in 1 2 3; do
  epmd=""
  for pid in $(ip netns pids "$(rec "ns$n")"); do
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = epmd ] && epmd=$pid
  done
  check "node $n's namespace has an epmd of its own (${epmd:-none})" test -n "$epmd"
done
for n in 1 2 3; do
  check "node $n's config: net_ticktime 10, pause_minority" \
    test "$("$cluster" ctl "$dir" "$n" eval '{net_kernel:get_net_ticktime(), application:get_env(rabbit, cluster_partition_handling)}.' 2>/dev/null)" = "{10,{ok,pause_minority}}"
done

# messages through each node's URL: published through node N, consumed
# through the next one
for n in 1 2 3; do
  m=$(( n % 3 + 1 ))
  got=$("$py" - "$("$cluster" url "$dir" $n)" "$("$cluster" url "$dir" $m)" "tarry.netns.$n" <<'PY'
import sys
import pika
pub, sub, q = sys.argv[1:4]
conn = pika.BlockingConnection(pika.URLParameters(pub))
ch = conn.channel()
ch.confirm_delivery()
ch.queue_declare(q, durable=True, arguments={"x-queue-type": "quorum"})
for i in range(3):
    ch.basic_publish("", q, b"m%d" % i, pika.BasicProperties(delivery_mode=2))
conn.close()
conn = pika.BlockingConnection(pika.URLParameters(sub))
ch = conn.channel()
got = []
while True:
    method, _, body = ch.basic_get(q)
    if method is None:
        break
    got.append(body.decode())
    ch.basic_ack(method.delivery_tag)
ch.queue_delete(q)
conn.close()
print(" ".join(got))
PY
)
  check "three messages published through node $n, consumed through node $m" test "$got" = "m0 m1 m2"
done

# a partition: node 2 cut off from nodes 1 and 3
fake="$dir/not-netns"
mkdir -p "$fake/n1" "$fake/n2" "$fake/n3"
"$cluster" partition "$fake" 2 >/dev/null 2>"$dir/partition.err"
check "partition on a cluster without --netns refuses and says why" \
  test $? != 0 -a -n "$(grep -- '--netns' "$dir/partition.err")"
node2="rabbit@$prefix.12"
t0=$SECONDS
check "partition DIR 2" "$cluster" partition "$dir" 2
check "  a new TCP connection from the host to node 2 is accepted" tcp_connects "$prefix.12"
check "  node 1's namespace cannot connect to node 2" \
  test -n "$(ip netns exec "$(rec ns1)" "$py" -c "
import socket
try:
    socket.create_connection(('$prefix.12', 25672), timeout=3)
except OSError:
    print('cut')" 2>/dev/null)"
notice() { ! sees 1 "$node2" && ! sees 3 "$node2"; }
if wait_for 30 notice; then
  ok "  nodes 1 and 3 no longer list node 2 as running, $((SECONDS - t0)) s after the cut (net_ticktime 10)"
else
  bad "  nodes 1 and 3 still list node 2 as running 30 s after the cut"
fi
check "  pause_minority: node 2 (the minority) stops its listener (a new connection refused)" \
  wait_for 30 not tcp_connects "$prefix.12"
t0=$SECONDS
check "heal DIR" "$cluster" heal "$dir"
back() { sees 1 "$node2" && sees 2 "$node2" && sees 3 "$node2"; }
if wait_for 60 back; then
  ok "  node 2 is running again on all three nodes $((SECONDS - t0)) s after the heal"
else
  bad "  node 2 is not running on all three nodes 60 s after the heal"
fi
check "  status: exit 0" wait_for 30 quiet "$cluster" status "$dir"

# node 3 cut off from the others and from the clients
check "partition DIR 3 --clients" "$cluster" partition "$dir" 3 --clients
check "  a new connection to node 3 fails" not amqp_connects "$("$cluster" url "$dir" 3)"
check "  a new connection to node 1 opens" amqp_connects "$("$cluster" url "$dir" 1)"
t0=$SECONDS
check "heal DIR" "$cluster" heal "$dir"
check "  a new connection to node 3 opens again" wait_for 60 amqp_connects "$("$cluster" url "$dir" 3)"
if wait_for 60 all_three_everywhere; then
  ok "  each node sees three running nodes again $((SECONDS - t0)) s after the heal"
else
  bad "  not every node sees three running nodes 60 s after the heal"
fi
check "  no blackhole route left in the namespaces" \
  test -z "$(for n in 1 2 3; do ip -n "$(rec "ns$n")" route show type blackhole; done)"

# node 1's VM paused and resumed
vm1=$(cat "$dir/n1/pid")
state() { awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null; }
check "pause DIR 1" "$cluster" pause "$dir" 1
check "  node 1's VM (pid $vm1) is stopped (state T)" test "$(state "$vm1")" = T
sleep 2
check "resume DIR 1" "$cluster" resume "$dir" 1
check "  node 1's VM runs again (state $(state "$vm1"))" test "$(state "$vm1")" != T
check "  status: exit 0" wait_for 60 quiet "$cluster" status "$dir"

# stop
h=$(rec bridge); h=${h#tbr-}  # in every name of the cluster's
others() {  # BEFORE AFTER -> exit 0 when no line of the cluster's differs; prints the other lines that do
  local d
  d=$(diff <(echo "$1") <(echo "$2") | grep '^[<>] .')
  ! grep -qF -- "$h" <<<"$d" || return 1
  [ -z "$d" ] || echo "(apart from another cluster's, started or stopped meanwhile:$(sed 's/^</ gone:/; s/^>/ new:/' <<<"$d" | tr '\n' ' '))"
}
ns_pids=""
for n in 1 2 3; do ns_pids+=" $(ip netns pids "$(rec "ns$n")" | tr '\n' ' ')"; done
epmds=""
for pid in $ns_pids; do
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = epmd ] && epmds+=" $pid"
done
"$cluster" stop "$dir"
check "stop" test $? = 0
check "  leaves no Erlang VM of DIR" test -z "$(vms_of "$dir/")"
alive=""
for pid in $ns_pids; do
  # A zombie waiting for its parent to reap it is dead.
  [ -e "/proc/$pid" ] && [ "$(state "$pid")" != Z ] && alive+=" $pid($(cat "/proc/$pid/comm" 2>/dev/null))"
done
check "  leaves no process of the namespaces (the epmds were$epmds)" test -z "$alive"
if other=$(others "$netns_before" "$(netns_names)"); then
  ok "  ip netns list is as before${other:+ $other}"
else
  bad "  ip netns list is not as before: $(diff <(echo "$netns_before") <(netns_names) | grep '^[<>] .' | tr '\n' ' ')"
fi
if other=$(others "$links_before" "$(link_names)"); then
  ok "  ip -o link is as before${other:+ $other}"
else
  bad "  ip -o link is not as before: $(diff <(echo "$links_before") <(link_names) | grep '^[<>] .' | tr '\n' ' ')"
fi
check "  DIR/netns is removed" test ! -e "$dir/netns"
"$cluster" status "$dir" >/dev/null
check "status after stop: exit non-zero" test $? != 0
check "stop again is harmless" "$cluster" stop "$dir"

finish
