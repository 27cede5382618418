#!/usr/bin/env bash
# The API reference (make docs, docs/api/Doxyfile) is complete: doxygen
# over include/tarry/ gives no warning at all, so every public class,
# function, variable and enum is documented and no comment's markup is
# broken; every value of a public enum is documented too (doxygen 1.9.4
# does not warn about those: undocumented_enum_values.py reads its XML);
# the reference has its index.html; its main page links every docs/*.md;
# docs/api/namespaces.dox describes every namespace (doxygen leaves out
# the functions of a namespace it has no description of, and says
# nothing). A few seconds.
#
#   tests/docs/api_reference_test.sh [SOURCE_ROOT]
#
# SOURCE_ROOT (default: this tree) is where include/tarry/ and docs/ are
# read; tests/docs/api_reference_fails_test.sh passes a broken copy.
# Prints one line per check (each doxygen warning under the first) and
# `N passed, N failed`; exit 0 passed, 1 failed, 77 skipped (no doxygen:
# scripts/install-deps).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR/../scripts
. "$here/../scripts/script_checks.sh"
command -v doxygen >/dev/null || skip "doxygen is not installed (scripts/install-deps)"
root=$(cd "${1:-$here/../..}" && pwd)

out=$(mktemp -d "${TMPDIR:-/tmp}/tarry-api-reference.XXXXXX")
trap 'rm -rf "$out"' EXIT

# As `make docs` runs it, but into $out/html, and with the XML the enum
# values are read from.
(cd "$root" && { cat docs/api/Doxyfile; echo "OUTPUT_DIRECTORY = $out"; echo "GENERATE_XML = YES"; } |
  doxygen - >/dev/null 2>"$out/warnings")
status=$?

if [ -s "$out/warnings" ]; then
  bad "doxygen warns ($(grep -c . "$out/warnings") lines; make docs fails the same way):"
  sed "s|$root/||; s|^|  |" "$out/warnings"
elif [ "$status" -ne 0 ]; then
  bad "doxygen exited $status without a warning"
else
  ok "doxygen gives no warning: every public entity is documented"
fi
check "the reference has its index.html" test -s "$out/html/index.html"
if "$here/undocumented_enum_values.py" "$out/xml" >"$out/enum-values"; then
  ok "every value of a public enum is documented"
else
  bad "enum values without a comment:"
  sed "s|^|  include/|" "$out/enum-values"
fi

for page in "$root"/docs/*.md; do
  name=${page##*/}
  check "the main page links docs/$name" grep -qF "href=\"../../../docs/$name\"" "$root/docs/api/mainpage.md"
done

# Namespaces as headers open them, `namespace tarry::x {`, but detail ones.
namespaces=$(grep -rhoE '^namespace tarry(::[a-z_]+)* \{' "$root/include/tarry" --include='*.hpp' --exclude-dir=detail |
  awk '{ print $2 }' | grep -v '::detail$' | sort -u)
for ns in $namespaces; do
  check "docs/api/namespaces.dox describes $ns" grep -qx "/// @namespace $ns" "$root/docs/api/namespaces.dox"
done

finish
