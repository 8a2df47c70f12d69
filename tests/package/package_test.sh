#!/usr/bin/env bash
# kinesync as a game's project uses it. install: `cmake --install` the build to a scratch prefix,
# then a separate project finds it with find_package and links kinesync::server/client. subdirectory:
# the same project includes the source tree with add_subdirectory (libraries only: no programs,
# tests or benchmarks, and none of their dependencies). Either way the consumer builds the examples
# and the C API test and runs them over loopback. Usage: package_test.sh MODE SRC BUILD WORK
set -euo pipefail
mode="$1"; src="$2"; build="$3"; work="$4"
rm -rf "$work"; mkdir -p "$work"
jobs=$(nproc 2>/dev/null || echo 2)
consumer_args=(-DKS_EXAMPLES_DIR="$src/examples" -DKS_CAPI_TEST="$src/tests/capi/capi_test.c")
case "$mode" in
  install)
    cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
    test -f "$work/prefix/lib/cmake/kinesync/kinesyncConfig.cmake" || { echo "FAIL: no package config"; exit 1; }
    test -f "$work/prefix/lib/pkgconfig/kinesync.pc" || { echo "FAIL: no pkg-config file"; exit 1; }
    test -f "$work/prefix/include/kinesync/client/reconstruct.h" || { echo "FAIL: headers not installed"; exit 1; }
    test -f "$work/prefix/include/kinesync/schema/protocol_generated.h" || { echo "FAIL: generated headers not installed"; exit 1; }
    # pkg-config: the same program with the flags kinesync.pc gives.
    flags=$(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs kinesync)
    ${CXX:-c++} "$src/tests/package/main.cpp" $flags -o "$work/consumer-pc"
    "$work/consumer-pc"
    test -f "$work/prefix/include/kinesync/kinesync.h" || { echo "FAIL: C API header not installed"; exit 1; }
    cmake -S "$src/tests/package" -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release "${consumer_args[@]}" \
      -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log"
    ;;
  subdirectory)
    cmake -S "$src/tests/package" -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Debug "${consumer_args[@]}" \
      -DKS_SOURCE_DIR="$src" > "$work/configure.log"
    if grep -q "kinesync-server\|kinesync-tests" "$work/consumer/build.ninja"; then
      echo "FAIL: add_subdirectory builds more than the libraries"; exit 1
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
