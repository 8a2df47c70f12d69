#!/usr/bin/env bash
# The snapshot decoder's result is a function of the bytes alone. A 120 s stream of 4 characters
# (the shared clips when present, the built-in motion otherwise) recorded from the real builder
# under 3 % loss and reordering is decoded by this build's decoder and by two more built from this
# source tree with the other compiler (clang for a GCC build, GCC for a clang one): one at
# -O3 -march=native -ffp-contract=fast, one at -O0. Every decoded state must hash the same, and no
# payload may be refused. Usage: codec_cross_test.sh SRC BUILD WORK CXX_ID [MOCAP_DIR]
set -euo pipefail
src="$1"; build="$2"; work="$3"; cxx_id="$4"; mocap="${5:-}"
mkdir -p "$work"
clips=()
for c in cmu_02_01_walk cmu_35_24_run_jog cmu_05_20_dance_leaps cmu_01_01_jumps_turn_around; do
  [ -n "$mocap" ] && [ -f "$mocap/$c.bvh" ] && clips+=("$mocap/$c.bvh")
done
if [ ${#clips[@]} -gt 0 ]; then "$build/kinesync-codec-stream" "$work/stream.bin" --seconds 120 --clips "${clips[@]}"
else echo "(no shared clips: the built-in motion)"; "$build/kinesync-codec-stream" "$work/stream.bin" --seconds 120; fi
if [ "$cxx_id" = "GNU" ]; then other=clang++; else other=g++; fi
command -v "$other" > /dev/null || { echo "FAIL: $other not installed (setup.sh installs it)"; exit 1; }
main=$("$build/kinesync-codec-decode" "$work/stream.bin")
echo "this build ($cxx_id):                  $main"
fail=0
for variant in "O3:-O3 -march=native -ffp-contract=fast" "O0:-O0"; do
  name="${variant%%:*}"; flags="${variant#*:}"
  dir="$work/$other-$name"
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$other" -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="$flags" \
      -DKS_BUILD_TOOLS=OFF -DKS_BUILD_TESTS=OFF -DKS_BUILD_BENCH=OFF -DKS_CODEC_CHECK=ON > "$dir.configure.log" 2>&1 \
      || { cat "$dir.configure.log"; echo "FAIL: configure with $other"; exit 1; }
  fi
  cmake --build "$dir" --target kinesync-codec-decode > "$dir.build.log" 2>&1 || { tail -30 "$dir.build.log"; echo "FAIL: build with $other $flags"; exit 1; }
  got=$("$dir/kinesync-codec-decode" "$work/stream.bin")
  printf '%-38s %s\n' "$other $flags:" "$got"
  [ "$got" = "$main" ] || { echo "FAIL: $other $flags decodes differently"; fail=1; }
done
grep -q " refused 0 " <<<"$main" || { echo "FAIL: this build refused payloads"; fail=1; }
[ "$fail" = 0 ] && echo "PASS: bit-identical decoded states"
exit "$fail"
