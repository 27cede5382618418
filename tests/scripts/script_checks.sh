# shellcheck shell=bash
# What tarry's script tests share (tests/cluster/*_script_test.sh,
# tests/scripts/*_test.sh): skipping (exit 77) when what they need is not
# installed, and counting checks, ending with `N passed, N failed`.
# Sourced, not run.
#
#   require_rabbitmq VERSION   skips unless that RabbitMQ (3.10 or 4.0) can run here
#   require_pika               skips unless Debian's python3 has pika
#   check DESCRIPTION COMMAND...   ok when COMMAND exits 0, FAILED otherwise
#   ok / bad DESCRIPTION       counts one check passed / failed
#   node_eval BROKER DIR EXPR PATTERN
#                              the last line matching PATTERN (grep -E, whole
#                              line) that the node of DIR prints for
#                              `rabbitmqctl eval EXPR` (BROKER: scripts/broker):
#                              the value, not a warning the node logs beside it
#   quiet COMMAND...           COMMAND with its output thrown away
#   not COMMAND...             exit 0 when COMMAND fails
#   finish                     prints `N passed, N failed`; exit 0 when none failed

skip() { echo "skipped: $*"; exit 77; }

require_rabbitmq() {
  if [ "$1" = 4.0 ]; then
    [ -x "${TARRY_RABBITMQ_ROOT:-/var/cache/tarry/rabbitmq-4.0}/usr/lib/rabbitmq/bin/rabbitmq-server" ] ||
      skip "no RabbitMQ 4.0 root (scripts/install-deps --rabbitmq 4.0)"
  elif [ ! -x /usr/lib/rabbitmq/bin/rabbitmq-server ]; then
    skip "rabbitmq-server is not installed (scripts/install-deps)"
  fi
}

require_pika() {
  /usr/bin/python3 -c 'import pika' 2>/dev/null || skip "python3-pika is not installed (scripts/install-deps)"
}

passed=0 failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
bad() { echo "FAILED: $*"; failed=$((failed + 1)); }
check() {
  local what=$1; shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}
quiet() { "$@" >/dev/null 2>&1; }
node_eval() {
  local value attempt
  # A loaded machine can make rabbitmqctl time out, or print no value:
  # asked up to three times.
  for attempt in 1 2 3; do
    value=$("$1" ctl "$2" eval "$3" 2>/dev/null | grep -xE "$4" | tail -n 1)
    if [ -n "$value" ]; then
      echo "$value"
      return 0
    fi
    [ "$attempt" = 3 ] || sleep 2
  done
  return 1
}
not() { ! "$@"; }
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}
