#!/usr/bin/env bash
# The one command: set up (Debian packages), build, and run the whole test suite with the machine
# made busy (a busy loop per core beside the tests: CI's 2-core machines are often loaded) and
# every benchmark once in a smoke run; then the suite built with clang and libc++ under
# AddressSanitizer + UndefinedBehaviorSanitizer, three fuzz targets briefly, the Windows build
# (mingw-w64) with its tests under wine64, and the ARM64 build with the cross-architecture test
# and its whole suite under qemu-user (docs/PLATFORMS.md).
#   ./check.sh              everything
#   ./check.sh --no-setup   skip the apt-get step (packages already installed)
#   ./check.sh --fast       the Release build and its tests only
# Real-clip tests read ../shared/mocap (or $KS_MOCAP_DIR) and skip with a message when absent.
set -euo pipefail
cd "$(dirname "$0")"
setup=1; full=1
for arg in "$@"; do
  case "$arg" in
    --no-setup) setup=0 ;;
    --fast) full=0 ;;
    *) echo "unknown option: $arg" >&2; exit 2 ;;
  esac
done
jobs=$(nproc 2>/dev/null || echo 2)
say() { echo "== $* ($((SECONDS / 60)) min $((SECONDS % 60)) s) =="; }

[ "$setup" = 1 ] && ./setup.sh

say "build (Release, -Wall -Wextra -Werror)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
say "tests (with a busy loop per core beside them)"
busy=()
for _ in $(seq "$jobs"); do (while :; do :; done) & busy+=($!); done
trap 'kill "${busy[@]}" 2>/dev/null || true' EXIT
ctest --test-dir build --output-on-failure -j "$jobs" -LE builds
kill "${busy[@]}" 2>/dev/null || true
trap - EXIT
# The tests that compile a project of their own (label "builds": the package as a consumer builds
# it, the decoder under a second compiler) time nothing, so they run once the busy loops stop.
say "tests that build projects of their own"
ctest --test-dir build --output-on-failure -j "$jobs" -L builds
# Every benchmark once, briefly (KS_BENCH_SMOKE: fixed-length ones shortened; figures meaningless):
# a benchmark that crashes fails the check.
say "benchmarks, smoke run"
KS_BENCH_SMOKE=1 ./build/kinesync-bench --benchmark_min_time=0.001 --benchmark_format=json \
  --benchmark_out=build/bench-smoke.json > build/bench-smoke.log
echo "$(grep -c '"name"' build/bench-smoke.json) benchmarks ran"
[ "$full" = 1 ] || { say "all checks passed (--fast)"; exit 0; }

# One build checks two things: the sanitizers, and that nothing leans on libstdc++ or GCC (clang
# with libc++, as Apple's toolchains; GoogleTest built from source with it; no benchmarks, whose
# Debian library is libstdc++'s).
say "build (clang + libc++, Debug + AddressSanitizer + UndefinedBehaviorSanitizer)"
cmake -S . -B build-asan-libcxx -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DKS_LIBCXX=ON -DKS_SANITIZE=ON -DKS_BUILD_BENCH=OFF -DKS_GTEST_SOURCE_DIR=/usr/src/googletest
cmake --build build-asan-libcxx -j "$jobs"
say "tests under sanitizers (clang + libc++)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan-libcxx --output-on-failure -j "$jobs"

# libFuzzer (clang) for a bounded time: the datagram decoder, the server's whole datagram
# handling (sessions, cookies, acks, reliable messages, snapshots) from scripted peers, and the
# client's (handshake, definitions, snapshots in parts, refusals) from a scripted server.
say "fuzzing (clang + libFuzzer, 15 s per target)"
mkdir -p build-fuzz
cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DKS_FUZZ=ON -DKS_BUILD_TOOLS=OFF -DKS_BUILD_TESTS=OFF \
  -DKS_BUILD_BENCH=OFF -DKS_CODEC_CHECK=OFF > build-fuzz/configure.log
cmake --build build-fuzz -j "$jobs" --target kinesync-fuzz-packet kinesync-fuzz-server kinesync-fuzz-client
mkdir -p build-fuzz/corpus-packet build-fuzz/corpus-server build-fuzz/corpus-client
./build-fuzz/kinesync-fuzz-packet -ks_write_seeds=build-fuzz/corpus-packet > /dev/null
# Server scripts: a dev-mode and a token-mode one (handshakes, then sealed records).
printf '\x00\x80\x00\x00\x01\x00\x00\x81\x00\x00' > build-fuzz/corpus-server/seed-dev
printf '\x01\x80\x00\x00\xc0\x02\x00\x00\x00\xc0\x00\x00\x81\x00\x00\x41\x00\x00' > build-fuzz/corpus-server/seed-tokens
./build-fuzz/kinesync-fuzz-packet -max_total_time=15 -print_final_stats=0 build-fuzz/corpus-packet 2>&1 | tail -1
./build-fuzz/kinesync-fuzz-server -max_total_time=15 -print_final_stats=0 build-fuzz/corpus-server 2>&1 | tail -1
# Client scripts: the server's handshake, skeleton definitions (one of 200 joints), then
# snapshots; or skeletons by reference.
# Snapshots the session decodes: full states, deltas, parts (written by the target from the codec,
# which checks they decode: it exits 1 otherwise).
./build-fuzz/kinesync-fuzz-client -ks_write_seeds=build-fuzz/corpus-client > /dev/null
# A character on a skeleton the client holds (by reference), and one on a hash it never offered.
printf '\x80\x00\x00\x10\x02\x00\x00\x00\x10\x03\x00\x01\x01\x01' > build-fuzz/corpus-client/seed-refs
./build-fuzz/kinesync-fuzz-client -max_total_time=15 -print_final_stats=0 build-fuzz/corpus-client 2>&1 | tail -1

# cross_build DIR TOOLCHAIN [CMAKE ARGS]: a Release build with a cross toolchain, beside this Linux build.
cross_build() {
  mkdir -p "$1"
  cmake -S . -B "$1" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$2" -DCMAKE_BUILD_TYPE=Release -DKS_HOST_BUILD_DIR="$PWD/build" "${@:3}" > "$1/configure.log"
  cmake --build "$1" -j "$jobs"
}

# Windows: the client-only build (mingw-w64), its tests under wine64, and the interop test against
# this Linux build's server (docs/PLATFORMS.md).
say "build (Windows x86-64, mingw-w64: client, kinesync.dll, client-side tests)"
export WINEDEBUG=-all
# A wine prefix of the check's own, and one wineserver kept up (-p) in it for every test, started
# before anything else can start one: else each test's wine64 may start one or find one exiting
# (an unexplained launch failure was seen once).
export WINEPREFIX="$PWD/build-win64/wineprefix"
mkdir -p "$WINEPREFIX"
/usr/lib/wine/wineserver -k 2> /dev/null || true
/usr/lib/wine/wineserver -p
trap '/usr/lib/wine/wineserver -k 2> /dev/null || true' EXIT
/usr/lib/wine/wine64 wineboot --init > /dev/null 2>&1 || true  # the prefix, once, before tests race for it
cross_build build-win64 cmake/toolchains/mingw-w64-x86_64.cmake
say "Windows tests under wine64"
ctest --test-dir build-win64 --output-on-failure -j "$jobs"
/usr/lib/wine/wineserver -k 2> /dev/null || true
trap - EXIT

# ARM64: everything but the benchmarks built for aarch64 and the whole suite under qemu-user, the cross-architecture
# test (against this Linux build) among it: docs/PLATFORMS.md ("ARM64").
say "build (ARM64, aarch64 g++)"
# The benchmarks are left out: nothing here could run them at a meaningful speed (they run natively above).
cross_build build-arm64 cmake/toolchains/aarch64-linux-gnu.cmake -DKS_BUILD_BENCH=OFF
say "ARM64 tests under qemu-user (the whole suite, the cross-architecture test among them)"
ctest --test-dir build-arm64 --output-on-failure -j "$jobs"
say "all checks passed"
