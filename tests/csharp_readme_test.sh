#!/usr/bin/env bash
# bindings/csharp/README.md, "Outside Unity (Mono)", as written: its C# block saved as Hello.cs, its
# first sh block (mcs, the copy of libkinesync.so, mono) run in that folder with KS the repository
# (build/ being BUILD_DIR), without LD_LIBRARY_PATH; then, the copy removed, the first call throws
# DllNotFoundException: kinesync, and the second sh block (LD_LIBRARY_PATH) runs it.
# usage: tests/csharp_readme_test.sh SRC BUILD_DIR WORK_DIR   (exit 77 = skipped)
set -euo pipefail
src="$(cd "$1" && pwd)"; build="$(cd "$2" && pwd)"; work="$3"
source "$(dirname "${BASH_SOURCE[0]}")/support/mono.sh"
require_mono
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"; mkdir -p "$work/ks" "$work/hello"
work="$(cd "$work" && pwd)"

# The section's blocks: Hello.cs, run1.sh, run2.sh, ...
awk -v dir="$work" '/^## / { section = ($0 == "## Outside Unity (Mono)") }
                    section && /^```csharp$/ { f = dir "/hello/Hello.cs"; inside = 1; next }
                    section && /^```sh$/ { n++; f = dir "/run" n ".sh"; inside = 1; next }
                    /^```$/ { inside = 0; next }
                    inside { print > f }' "$src/bindings/csharp/README.md"
[ -s "$work/hello/Hello.cs" ] && [ -s "$work/run1.sh" ] && [ -s "$work/run2.sh" ] \
  || fail "the README's Mono section lacks its C# block or its two sh blocks"

# KS: the repository as the README means it, with this build as its build/.
ln -s "$src/bindings" "$work/ks/bindings"
ln -s "$build" "$work/ks/build"
run() {  # run BLOCK LOG: a README block in the Hello.cs folder, from a shell without LD_LIBRARY_PATH
  (cd "$work/hello" && env -u LD_LIBRARY_PATH KS="$work/ks" bash -euo pipefail "$1") > "$2" 2>&1
}
expect_hello() {  # expect_hello LOG WHAT: the program's two lines, the hand 0.5 m along x
  grep -q "^kinesync [0-9]" "$1" && grep -Eq '^hand shown at \((0\.49|0\.5)' "$1" || { cat "$1"; fail "$2"; }
}

run "$work/run1.sh" "$work/run1.log" || { cat "$work/run1.log"; fail "the README's mcs/cp/mono commands"; }
expect_hello "$work/run1.log" "Hello.exe with libkinesync.so beside it"
cat "$work/run1.log"

rm "$work/hello/libkinesync.so"
if (cd "$work/hello" && env -u LD_LIBRARY_PATH mono Hello.exe) > "$work/missing.log" 2>&1; then
  cat "$work/missing.log"; fail "Hello.exe ran without libkinesync.so beside it or on LD_LIBRARY_PATH"
fi
grep -q "DllNotFoundException: kinesync" "$work/missing.log" || { cat "$work/missing.log"; fail "not the DllNotFoundException the README names"; }
echo "without the copy: $(grep -o 'System.DllNotFoundException: kinesync' "$work/missing.log" | head -1)"

run "$work/run2.sh" "$work/run2.log" || { cat "$work/run2.log"; fail "the README's LD_LIBRARY_PATH command"; }
expect_hello "$work/run2.log" "Hello.exe through LD_LIBRARY_PATH"
echo "with LD_LIBRARY_PATH: $(tail -1 "$work/run2.log")"
echo "csharp readme ok"
