#!/bin/sh
# samples/systemd/tarry-worker@.service, checked without a running systemd
# (CI has none as process 1):
# 1. `systemd-analyze verify` prints nothing about it (instance "jobs",
#    ExecStart= pointed at the build's echo_worker);
# 2. `systemd-analyze security --offline=yes` rates its exposure at most 2.0;
# 3. the keys the worker relies on are there: Type=notify, WatchdogSec=,
#    the URL and token as credentials, read with --url-file and
#    --http-token-file, and --systemd;
# 4. ExecStart='s command line, with systemd's substitutions made here
#    (%i, ${CREDENTIALS_DIRECTORY}, ${HTTP_LISTEN}), starts echo_worker
#    on the private broker without the URL on the command line, and SIGTERM
#    stops it with exit 0. Skipped (77) after 1-3 without a broker.
#   systemd_unit_test.sh UNIT ECHO_WORKER
set -eu
unit=$1
worker=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
dir=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "systemd_unit_test: $*" >&2; exit 1; }

instance="$dir/tarry-worker@jobs.service"
sed "s|/usr/lib/tarry/examples/echo_worker|$worker|" "$unit" > "$instance"

# 1 and 2.
if command -v systemd-analyze >/dev/null; then
  out=$(systemd-analyze verify "$instance" 2>&1) || fail "systemd-analyze verify failed: $out"
  [ -z "$out" ] || fail "systemd-analyze verify: $out"
  exposure=$(systemd-analyze security --offline=yes "$instance" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
  [ -n "$exposure" ] || fail "no exposure level from systemd-analyze security"
  awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }' || fail "exposure $exposure, above 2.0"
  echo "systemd-analyze: verified, exposure $exposure"
else
  echo "systemd-analyze not found (package systemd): the unit's keys are checked below only"
fi

# 3.
for key in 'Type=notify' 'WatchdogSec=' 'LoadCredential=url:' 'LoadCredential=token:' 'DynamicUser=yes' \
           'NoNewPrivileges=yes' 'ProtectSystem=strict'; do
  grep -q "^$key" "$unit" || fail "no $key line"
done
exec_start=$(sed -n 's/^ExecStart=//p' "$instance")
for option in '--systemd' '--url-file ${CREDENTIALS_DIRECTORY}/url' '--http-token-file ${CREDENTIALS_DIRECTORY}/token'; do
  case $exec_start in *"$option"*) ;; *) fail "ExecStart= lacks $option" ;; esac
done

# 4.
[ -n "${TARRY_TEST_AMQP_URL:-}" ] || { echo "no broker (TARRY_TEST_AMQP_URL): ExecStart= not run"; exit 77; }
queue="tarry.systemd-unit.$$"
mkdir "$dir/credentials"
printf '# the broker\n%s\n' "$TARRY_TEST_AMQP_URL" > "$dir/credentials/url"
printf 'token-%s\n' "$$" > "$dir/credentials/token"
command_line=$(printf '%s' "$exec_start" | sed -e "s|%i|$queue|g" \
  -e "s|\${CREDENTIALS_DIRECTORY}|$dir/credentials|g" -e 's|\${HTTP_LISTEN}|127.0.0.1:0|g')
# shellcheck disable=SC2086  # the unit's words, as systemd splits them
$command_line > "$dir/out" 2> "$dir/err" &
pid=$!
i=0
until grep -q '"event":"ready"' "$dir/out"; do
  i=$((i + 1))
  [ $i -le 300 ] && kill -0 "$pid" 2>/dev/null || fail "not ready: $(cat "$dir/out" "$dir/err")"
  sleep 0.1
done
case $(tr '\0' ' ' < "/proc/$pid/cmdline") in *amqp://*) fail "the URL is on the command line" ;; esac
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=
[ "$rc" = 0 ] || fail "exit $rc after SIGTERM: $(cat "$dir/err")"
grep -q '"event":"stopped"' "$dir/out" || fail "no stopped line: $(cat "$dir/out")"
/usr/bin/python3 "$(dirname "$0")/../support/delete_queues.py" "$TARRY_TEST_AMQP_URL" "$queue" "$queue.dead"
echo "ExecStart= ran echo_worker until SIGTERM, exit 0"
