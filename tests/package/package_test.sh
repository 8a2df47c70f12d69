#!/usr/bin/env bash
# kinesync as a game's project uses it.
#   install: `cmake --install` the build to a scratch prefix, then check what a consumer gets (only
#     public headers, each compiling alone as C++17 or C99 with nothing private, Asio, FlatBuffers
#     or spdlog in them; the headers the client's header pulls, under a bound; libkinesync with a
#     SONAME exporting only ks_*), build a C++ and a C program with `pkg-config --cflags --libs`
#     alone, and a separate project with find_package.
#   subdirectory: the same project includes the source tree with add_subdirectory (libraries
#     only: no programs, tests or benchmarks, and none of their dependencies).
# Either way the consumer builds the examples and the C API test and runs them over loopback.
# Usage: package_test.sh MODE SRC BUILD WORK
set -euo pipefail
mode="$1"; src="$2"; build="$3"; work="$4"
rm -rf "$work"; mkdir -p "$work"
jobs=$(nproc 2>/dev/null || echo 2)
consumer_args=(-DKS_EXAMPLES_DIR="$src/examples" -DKS_CAPI_TEST="$src/tests/capi/capi_test.c")
fail() { echo "FAIL: $*"; exit 1; }

# Headers pulled by one consumer file: kinesync's own and in all (the C++ standard library's
# <string> alone is 153 of them with libstdc++ 12).
client_header_bound_own=16
client_header_bound_all=300

check_installed() {
  local p="$1" inc="$1/include" lib="$1/lib"
  for f in include/kinesync/client/stream_client.h include/kinesync/server/stream_server.h include/kinesync/kinesync.h \
           lib/cmake/kinesync/kinesyncConfig.cmake lib/pkgconfig/kinesync.pc lib/pkgconfig/kinesync-c.pc; do
    test -f "$p/$f" || fail "$f not installed"
  done
  [ ! -e "$inc/kinesync/schema" ] && ! find "$inc" -path '*/src/*' | grep -q . || fail "private headers installed"
  if grep -rlE '#include "|asio|flatbuffers|spdlog' "$inc" > "$work/leaks.txt"; then cat "$work/leaks.txt"; fail "an installed header includes a private or third-party header"; fi
  # Each header alone, and the exceptions each promises (C++17, C99 for the C API).
  bash "$src/tests/package/headers_test.sh" "$work/headers" "$inc" || fail "the installed headers"
  echo '#include <kinesync/client/stream_client.h>' > "$work/client.cpp"
  ${CXX:-c++} -std=c++17 -fsyntax-only -H -I"$inc" "$work/client.cpp" 2> "$work/client.H"
  local all own
  all=$(grep -c '^\.' "$work/client.H"); own=$(grep '^\.' "$work/client.H" | grep -c "$inc" || true)
  echo "kinesync/client/stream_client.h pulls $all headers, $own of them kinesync's (bounds $client_header_bound_all, $client_header_bound_own)"
  [ "$all" -le "$client_header_bound_all" ] && [ "$own" -le "$client_header_bound_own" ] || fail "the client header pulls too much"
  # The shared library: versioned, a SONAME, only the C API exported.
  readelf -d "$lib/libkinesync.so" | grep -q 'SONAME.*libkinesync.so.0' || fail "libkinesync has no SONAME libkinesync.so.0"
  test -f "$lib/libkinesync.so.0" || fail "no libkinesync.so.0"
  nm -D --defined-only "$lib/libkinesync.so" | awk '$2 ~ /[TDBRW]/ { print $3 }' | grep -v '^ks_' > "$work/exports.txt" || true
  [ ! -s "$work/exports.txt" ] || { head "$work/exports.txt"; fail "libkinesync exports more than ks_*"; }
}

case "$mode" in
  install)
    cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
    check_installed "$work/prefix"
    export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
    # C++ with the flags kinesync.pc gives, nothing else.
    ${CXX:-c++} "$src/tests/package/main.cpp" $(pkg-config --cflags --libs kinesync) -o "$work/consumer-pc"
    "$work/consumer-pc"
    # C with the flags kinesync-c.pc gives (-lm is the test's own); LD_LIBRARY_PATH stands in for
    # a standard prefix's loader cache.
    ${CC:-cc} -std=c99 -Wall -Wextra -Werror "$src/tests/capi/capi_test.c" $(pkg-config --cflags --libs kinesync-c) -lm -o "$work/capi-pc"
    LD_LIBRARY_PATH="$work/prefix/lib" "$work/capi-pc" > "$work/capi-pc.log" || { cat "$work/capi-pc.log"; fail "the C program built with pkg-config"; }
    echo "C and C++ programs built with pkg-config --cflags --libs alone run"
    cmake -S "$src/tests/package" -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release "${consumer_args[@]}" \
      -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log"
    ;;
  subdirectory)
    cmake -S "$src/tests/package" -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Debug "${consumer_args[@]}" \
      -DKS_SOURCE_DIR="$src" > "$work/configure.log"
    if grep -q "kinesync-server\|kinesync-tests" "$work/consumer/build.ninja"; then
      fail "add_subdirectory builds more than the libraries"
    fi
    ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
cmake --build "$work/consumer" -j "$jobs" > "$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
"$work/consumer/consumer"
# The consumer's own builds of the examples stream and reconstruct over loopback; the C test passes.
"$work/consumer/capi_test"
bash "$src/tests/examples_test.sh" "$work/consumer/game_server" "$work/consumer/game_client" "$work/examples" \
  "$src/../shared/mocap/cmu_02_01_walk.bvh"
