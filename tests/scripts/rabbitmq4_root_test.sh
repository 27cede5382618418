#!/usr/bin/env bash
# scripts/broker --rabbitmq 4.0 against the Debian 13 root (scripts/rabbit-root.sh):
# two nodes started at once share the root's /proc; a stopped node leaves no
# mount and no process from the root behind; the version is remembered for
# ctl, status and start-again; without a root, start fails and names the
# install-deps command. About 30 s (three boots of a 4.0 node).
#
#   tests/scripts/rabbitmq4_root_test.sh
#
# Always RabbitMQ 4.0, whatever TARRY_TEST_RABBITMQ says. Prints one line
# per check and `N passed, N failed`; exit 0 passed, 1 failed, 77 skipped
# (no 4.0 root: scripts/install-deps --rabbitmq 4.0).
# shellcheck disable=SC2317  # functions run by the trap and by check
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
broker="$here/../../scripts/broker"
# shellcheck source-path=SCRIPTDIR
. "$here/script_checks.sh"
require_rabbitmq 4.0
root=$(cd "${TARRY_RABBITMQ_ROOT:-/var/cache/tarry/rabbitmq-4.0}" && pwd -P)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tarry-root-test.XXXXXX")
a="$tmp/a" b="$tmp/b"
cleanup() {
  "$broker" stop "$a" >/dev/null 2>&1 || true
  "$broker" stop "$b" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

node_of() { echo "tarry-$(cat "$1/port")@localhost"; }
mounted() { awk -v m="$1" '$5 == m { found = 1 } END { exit !found }' /proc/self/mountinfo; }
not_mounted() { ! mounted "$1"; }
not_running() { ! "$broker" status "$1" 2>/dev/null; }
root_users() {  # mount points under the root other than its /proc
  awk -v r="$root/" 'index($5, r) == 1 && $5 != r "proc" && index($5, r "proc/") != 1 { print $5 }' /proc/self/mountinfo
}
from_root() {  # [NODE] -> pids of the processes whose root is the root (that run for NODE)
  local pid
  for pid in $(find /proc -mindepth 2 -maxdepth 2 -name root -lname "$root" 2>/dev/null | cut -d/ -f3); do
    if [ -z "${1:-}" ] || tr '\0' '\n' 2>/dev/null < "/proc/$pid/environ" | grep -qxF "RABBITMQ_NODENAME=$1"; then
      echo "$pid"
    fi
  done
}
none_from_root() { [ -z "$(from_root "$@")" ]; }
server_version() {  # URL -> the version the broker sends in connection.start
  /usr/bin/python3 - "$1" <<'PY'
import re, socket, sys
port = int(re.search(r":(\d+)/", sys.argv[1]).group(1))
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(b"AMQP\x00\x00\x09\x01")
data = b""
while b"\xce" not in data[7:] or len(data) < 7 + int.from_bytes(data[3:7], "big") + 1:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
i = data.find(b"\x07versionS")
n = int.from_bytes(data[i + 9:i + 13], "big")
print(data[i + 13:i + 13 + n].decode())
PY
}

# without a root
TARRY_RABBITMQ_ROOT="$tmp/no-root" "$broker" start "$tmp/x" --rabbitmq 4.0 >/dev/null 2>"$tmp/no-root.err"
check "start --rabbitmq 4.0 without a root fails" test $? != 0
check "  and names scripts/install-deps --rabbitmq 4.0" grep -qF "scripts/install-deps --rabbitmq 4.0" "$tmp/no-root.err"
check "  and starts nothing" test ! -e "$tmp/x/port"

# two nodes at once
t0=$SECONDS
"$broker" start "$a" --rabbitmq 4.0 > "$tmp/a.out" 2>&1 & pa=$!
"$broker" start "$b" --rabbitmq 4.0 --dead-letter-resend-ms default > "$tmp/b.out" 2>&1 & pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
if [ $ra != 0 ] || [ $rb != 0 ]; then
  cat "$tmp/a.out" "$tmp/b.out"
  bad "two 4.0 nodes started at once"
  finish
fi
ok "two 4.0 nodes started at once (in $((SECONDS - t0)) s)"
check "start prints the node's URL" test "$(cat "$tmp/a.out")" = "$(cat "$a/url")"
version=$(server_version "$(cat "$a/url")")
check "connection.start says version 4.0.5 (it says '$version')" test "$version" = 4.0.5
check "status without --rabbitmq: running" "$broker" status "$a"
permitted() {  # DIR FEATURE -> true or false, as the node says (it logs a denial beside it)
  node_eval "$broker" "$1" "rabbit_deprecated_features:is_permitted($2)." 'true|false'
}
resend_ms() {  # DIR -> {ok,N}: how long its dead-lettering waits for a confirm
  node_eval "$broker" "$1" "application:get_env(rabbit, dead_letter_worker_publisher_confirm_timeout)." '\{ok,[0-9]+\}|undefined'
}
said=$(permitted "$a" transient_nonexcl_queues)
check "ctl without --rabbitmq: transient non-exclusive queues are denied (the node says '$said')" test "$said" = false
said=$(permitted "$b" global_qos)
check "ctl: global QoS is denied (the node says '$said')" test "$said" = false
check "the node directories are mounted in the root" mounted "$root$a"
check "  and so is the root's /proc" mounted "$root/proc"
resend=$(resend_ms "$a")
check "a node resends an unconfirmed dead-letter after 10 s (it says '$resend')" test "$resend" = "{ok,10000}"
resend=$(resend_ms "$b")
check "  one started with --dead-letter-resend-ms default after RabbitMQ's 180 s (it says '$resend')" \
  test "$resend" = "{ok,180000}"
node_a=$(node_of "$a") node_b=$(node_of "$b")
check "node a runs from the root" test -n "$(from_root "$node_a")"

# one stopped, the other running
check "stop a" "$broker" stop "$a"
check "  leaves a unmounted in the root" not_mounted "$root$a"
check "  leaves no process from the root for node a" none_from_root "$node_a"
check "  keeps /proc mounted for node b" mounted "$root/proc"
check "  and node b running" "$broker" status "$b"
check "status of the stopped node: not running" not_running "$a"
url=$("$broker" start-again "$a" 2>&1)
check "start-again without --rabbitmq: the same URL" test "$url" = "$(cat "$a/url" 2>/dev/null)"
check "  a 4.0 node again" test "$(server_version "$url")" = 4.0.5
check "stop a again" "$broker" stop "$a"

# the last of them stopped
check "stop b" "$broker" stop "$b"
for d in "$a" "$b"; do
  check "no mount left at $root$d" not_mounted "$root$d"
done
check "no process from the root for node a or b" none_from_root "$node_a"
check "  (b)" none_from_root "$node_b"
check "no mount point left in the root for a or b" test ! -e "$root$a" -a ! -e "$root$b"
others=$(root_users)
if [ -n "$others" ]; then
  # Another node runs from the root (another test's, the run's shared 4.0 broker).
  ok "the root's /proc stays for the other nodes running from it: $(echo "$others" | tr '\n' ' ')"
else
  check "the root's /proc is unmounted with the last node" not_mounted "$root/proc"
  check "  and nothing runs from the root" none_from_root
fi
finish
