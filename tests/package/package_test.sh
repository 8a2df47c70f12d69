#!/usr/bin/env bash
# kinesync as a game's project uses it.
#   install: `cmake --install` the build to a scratch prefix, then check what a consumer gets (only
#     public headers, each compiling alone as C++17 or C99 with nothing private, Asio, FlatBuffers
#     or spdlog in them, declaring the exceptions they promise (headers_test.sh); the headers the
#     client's header pulls, under a bound; libkinesync with a SONAME exporting only ks_*), run
#     the installed programs from the prefix, build C++ programs (one on kinesync::offline) and a C
#     program with `pkg-config --cflags --libs` alone and run them, all without LD_LIBRARY_PATH,
#     and build a separate project with find_package.
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

# Run as from a fresh shell: nothing in LD_LIBRARY_PATH.
bare() { env -u LD_LIBRARY_PATH "$@"; }

# The installed programs and libkinesync find the prefix's libraries from where they are (run
# paths $ORIGIN/../lib and $ORIGIN): each program answers --version from the prefix.
check_run_paths() {
  local p="$1" version prog out
  version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
  readelf -d "$p/lib/libkinesync.so" | grep -q 'RUNPATH.*\[\$ORIGIN\]' || fail "libkinesync.so has no run path \$ORIGIN"
  for prog in "$p"/bin/*; do
    readelf -d "$prog" | grep -q 'RUNPATH.*\[\$ORIGIN/\.\./lib\]' || fail "$(basename "$prog") has no run path \$ORIGIN/../lib"
    out=$(bare "$prog" --version) || fail "$prog --version"
    [ "$out" = "$(basename "$prog") $version" ] || fail "$prog --version says '$out'"
  done
  echo "installed programs run from $p/bin without LD_LIBRARY_PATH: $(ls "$p/bin" | tr '\n' ' ')"
}

case "$mode" in
  install)
    cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
    check_installed "$work/prefix"
    check_run_paths "$work/prefix"
    export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
    # C++ with the flags kinesync.pc gives, nothing else: a client and server, and the example game
    # server on the built-in walk (kinesync::offline's builtin_clip).
    ${CXX:-c++} "$src/tests/package/main.cpp" $(pkg-config --cflags --libs kinesync) -o "$work/consumer-pc"
    bare "$work/consumer-pc"
    ${CXX:-c++} "$src/examples/game_server.cpp" $(pkg-config --cflags --libs kinesync) -o "$work/game-server-pc"
    bare "$work/game-server-pc" --port 0 --seconds 0.5 > "$work/game-server-pc.log" 2>&1 || { cat "$work/game-server-pc.log"; fail "game_server built with pkg-config"; }
    grep -Eq '^streamed [1-9][0-9]* ticks' "$work/game-server-pc.log" || { cat "$work/game-server-pc.log"; fail "game_server built with pkg-config did not stream"; }
    # C with the flags kinesync-c.pc gives (-lm is the test's own): its run path finds libkinesync.
    ${CC:-cc} -std=c99 -Wall -Wextra -Werror "$src/tests/capi/capi_test.c" $(pkg-config --cflags --libs kinesync-c) -lm -o "$work/capi-pc"
    bare "$work/capi-pc" > "$work/capi-pc.log" 2>&1 || { cat "$work/capi-pc.log"; fail "the C program built with pkg-config"; }
    # Shipped: libkinesync.so.0 beside the program, found through $ORIGIN (as docs/PLATFORMS.md shows).
    mkdir -p "$work/shipped"
    ${CC:-cc} -std=c99 -Wall -Wextra -Werror "$src/tests/capi/capi_test.c" $(pkg-config --cflags --libs-only-L --libs-only-l kinesync-c) \
      -Wl,-rpath,'$ORIGIN' -lm -o "$work/shipped/capi"
    cp "$work/prefix/lib/libkinesync.so.0" "$work/shipped/"
    bare "$work/shipped/capi" > "$work/shipped/capi.log" 2>&1 || { cat "$work/shipped/capi.log"; fail "the C program with libkinesync.so.0 beside it"; }
    readelf -d "$work/shipped/capi" | grep -q 'RUNPATH.*\[\$ORIGIN\]' || fail "the shipped program's run path is not \$ORIGIN alone"
    echo "C and C++ programs built with pkg-config --cflags --libs alone run without LD_LIBRARY_PATH"
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
