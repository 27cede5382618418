#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds consumer_app.cpp
# out of tree twice, with meson through pkg-config and with CMake through
# find_package, and runs each against the broker at TARRY_TEST_AMQP_URL
# without LD_LIBRARY_PATH: one job published with a delay by the installed
# `tarry` tool must be held and run on time.
#
#   run_install_test.sh BUILD_DIR
#   run_install_test.sh --root ROOT
#
# With --root, the tree is not installed from a build but is ROOT/usr, the
# Debian packages unpacked there (scripts/test-deb); their `tarry` has no
# RUNPATH (libtarry is in the system's library directory when installed),
# so it is run with LD_LIBRARY_PATH, while the programs built here must still
# find libtarry by themselves.
#
# Exit 0 passed, 1 failed, 77 skipped (no broker URL: meson counts it as
# skipped).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
unpacked=""
if [ "${1:-}" = --root ]; then
  unpacked=$(cd "$2" && pwd)
else
  build=$(cd "$1" && pwd)
fi
if [ -z "${TARRY_TEST_AMQP_URL:-}" ]; then
  echo "skipped: TARRY_TEST_AMQP_URL is not set (make test starts a broker)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

# 1. Install. tarry.pc and the CMake package name their prefix relative to
#    themselves, so the staged tree works where it is.
stage="$work/stage"
if [ -n "$unpacked" ]; then
  stage=$unpacked
else
  meson install -C "$build" --no-rebuild --quiet --destdir "$stage" >"$work/install.log" 2>&1 \
    || { cat "$work/install.log"; fail "meson install"; }
fi
pc=$(find "$stage" -name tarry.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || fail "no tarry.pc installed"
libdir=$(cd "$(dirname "$pc")/.." && pwd)
prefix=$(cd "$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --variable=prefix tarry)" && pwd) \
  || fail "tarry.pc names no prefix that exists"
for f in "$prefix/include/tarry/consumer/consumer.hpp" "$prefix/include/tarry/time/time_points.hpp" \
         "$libdir/libtarry.so" "$libdir/libtarry.a" "$libdir/cmake/tarry/tarryConfig.cmake" \
         "$libdir/cmake/tarry/tarryConfigVersion.cmake" "$prefix/bin/tarry"; do
  [ -e "$f" ] || fail "not installed: ${f#$stage}"
done
[ -z "$(find "$prefix/include" -name 'include-roots' -o -name '*.cpp')" ] || fail "build files installed under include/"
echo "installed into a temporary prefix: $(find "$stage" -type f | wc -l) files"

# 2. Build the program out of tree, both ways. A build with sanitizers
#    (scripts/sanitize) installs an instrumented libtarry: a program that
#    links it is built with the same sanitizers (ASan's runtime must be the
#    first library loaded), as its users would.
sanitize=none
[ -n "$unpacked" ] || sanitize=$(meson introspect "$build" --buildoptions | python3 -c \
  'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "b_sanitize"))') \
  || fail "cannot read the build's b_sanitize"
meson_sanitize=() cmake_sanitize=()
if [ "$sanitize" != none ]; then
  meson_sanitize=("-Db_sanitize=$sanitize" -Db_lundef=false)
  cmake_sanitize=("-DCMAKE_CXX_FLAGS=-fsanitize=$sanitize")
  echo "the out-of-tree programs are built with -fsanitize=$sanitize, like the library"
fi
PKG_CONFIG_PATH="$libdir/pkgconfig" meson setup "$work/meson-app" "$here" "${meson_sanitize[@]}" >"$work/meson.log" 2>&1 \
  && ninja -C "$work/meson-app" >>"$work/meson.log" 2>&1 \
  || { cat "$work/meson.log"; fail "the meson build through pkg-config"; }
cmake -S "$here" -B "$work/cmake-app" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cmake_sanitize[@]}" \
  >"$work/cmake.log" 2>&1 \
  && cmake --build "$work/cmake-app" >>"$work/cmake.log" 2>&1 \
  || { cat "$work/cmake.log"; fail "the CMake build through find_package"; }

# 3. Run each: it must find the staged libtarry by itself.
run_app() {
  local name=$1 app=$2 queue="tarry-install-$$-$1" out="$work/$1.out"
  # ldd's whole output first: with pipefail, `ldd | grep -q` fails when grep
  # stops reading at its match before ldd has written everything.
  local deps
  deps=$(ldd "$app")
  grep -q "libtarry.so.* => $stage" <<<"$deps" \
    || { echo "$deps"; fail "$name: consumer_app does not load the installed libtarry"; }
  env -u LD_LIBRARY_PATH "$app" "$TARRY_TEST_AMQP_URL" "$queue" 30 >"$out" 2>&1 &
  local pid=$!
  for _ in $(seq 300); do
    grep -q '^ready' "$out" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  grep -q '^ready' "$out" || { kill "$pid" 2>/dev/null; cat "$out"; fail "$name: consumer_app never got ready"; }
  local tool_env=(-u LD_LIBRARY_PATH)
  [ -z "$unpacked" ] || tool_env=("LD_LIBRARY_PATH=$libdir")
  env "${tool_env[@]}" "$prefix/bin/tarry" publish --url "$TARRY_TEST_AMQP_URL" --queue "$queue" \
    --delay-ms 1500 --id "install-$name" || { kill "$pid"; fail "$name: tarry publish"; }
  wait "$pid"
  local rc=$?
  cat "$out"
  [ $rc -eq 0 ] || fail "$name: consumer_app exited $rc"
  echo "ok: $name build"
}
run_app meson "$work/meson-app/consumer_app"
run_app cmake "$work/cmake-app/consumer_app"
echo "passed: installed tree consumed by meson (pkg-config) and CMake (find_package)"
