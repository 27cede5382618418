#!/usr/bin/env bash
# tests/docs/api_reference_test.sh can fail: on a copy of include/tarry/ and
# docs/ with an undocumented class, member, function and enum value
# appended to a public header it exits 1 and names them; with a docs/*.md
# the main page does not link, 1 again; without doxygen on the PATH it
# skips (77), never passes. A few seconds.
#
#   tests/docs/api_reference_fails_test.sh
#
# Prints one line per check and `N passed, N failed`; exit 0 passed,
# 1 failed, 77 skipped (no doxygen: scripts/install-deps).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source-path=SCRIPTDIR/../scripts
. "$here/../scripts/script_checks.sh"
command -v doxygen >/dev/null || skip "doxygen is not installed (scripts/install-deps)"
check_script="$here/api_reference_test.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tarry-api-reference-fails.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

copy() {  # DIR -> a copy of what the reference is made of
  mkdir -p "$1"
  cp -R "$root/include" "$root/docs" "$1/"
}

copy "$tmp/undocumented"
cat >>"$tmp/undocumented/include/tarry/retry/backoff.hpp" <<'CPP'
namespace tarry::retry {
class undocumented_probe {
public:
    int undocumented_member() const;
};
int undocumented_probe_function();
/// Documented, but one of its values is not.
enum class probe_kind {
    documented_value,  ///< documented
    undocumented_probe_value,
};
}  // namespace tarry::retry
CPP
"$check_script" "$tmp/undocumented" >"$tmp/undocumented.out" 2>&1
check "undocumented entities: exit 1" test $? -eq 1
for name in undocumented_probe undocumented_member undocumented_probe_function undocumented_probe_value; do
  check "undocumented entities: the output names $name" \
    grep -q "tarry/retry/backoff.hpp:.*$name.* is not documented" "$tmp/undocumented.out"
done
check "undocumented entities: a documented enum value is not named" \
  not grep -q "probe_kind::documented_value" "$tmp/undocumented.out"

copy "$tmp/unlinked"
echo "# A page the main page does not link" >"$tmp/unlinked/docs/unlinked-probe.md"
"$check_script" "$tmp/unlinked" >"$tmp/unlinked.out" 2>&1
check "a docs/*.md the main page does not link: exit 1" test $? -eq 1
check "a docs/*.md the main page does not link: named" grep -q "FAILED: .*unlinked-probe.md" "$tmp/unlinked.out"

# Without doxygen: a PATH with only what the check needs before it looks.
mkdir "$tmp/bin"
ln -s "$(command -v dirname)" "$tmp/bin/dirname"
PATH="$tmp/bin" "$BASH" "$check_script" >"$tmp/no-doxygen.out" 2>&1
check "without doxygen: exit 77 (skipped)" test $? -eq 77

finish
