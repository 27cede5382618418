#!/usr/bin/env bash
# The settings every node of scripts/broker has unless told otherwise
# (docs/reliability.md, "Broker settings"), as the run's private node
# (scripts/with-broker: TARRY_TEST_BROKER_DIR) says: a quorum queue's
# at-least-once dead-lettering sends a message again after 10 s without a
# confirm (RabbitMQ's default, 180 s, is checked by rabbitmq4_root_test.sh's
# node started with --dead-letter-resend-ms default). A bad value is refused
# before anything starts. Skipped (77) without a private node.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
broker="$here/../../scripts/broker"
# shellcheck source-path=SCRIPTDIR
. "$here/script_checks.sh"
[ -n "${TARRY_TEST_BROKER_DIR:-}" ] || skip "no private node (run under scripts/with-broker)"

resend=$(node_eval "$broker" "$TARRY_TEST_BROKER_DIR" \
  "application:get_env(rabbit, dead_letter_worker_publisher_confirm_timeout)." '\{ok,[0-9]+\}|undefined')
check "the node resends an unconfirmed dead-letter after 10 s (it says '$resend')" test "$resend" = "{ok,10000}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tarry-settings-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$broker" start "$tmp/n" --dead-letter-resend-ms 0 >/dev/null 2>"$tmp/err"
check "--dead-letter-resend-ms 0 is refused" test $? != 0
check "  saying what it takes" grep -qF "takes milliseconds or 'default'" "$tmp/err"
check "  and starts nothing" test ! -e "$tmp/n/port"
finish
