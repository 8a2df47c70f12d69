#!/usr/bin/env bash
# What a game links registers no thread_local destructor (no reference to __cxa_thread_atexit):
# on mingw-w64 such a destructor can run after its thread's storage is freed (a thread_local
# FlatBuffers builder crashed a Windows client at exit), and a game's threads exit when it likes.
# Per-thread state is kept trivially destructible instead.
#   thread_exit_test.sh NM LIBRARY...
set -uo pipefail
nm_tool="$1"; shift
bad=0
for lib in "$@"; do
  [ -f "$lib" ] || { echo "FAIL: no library at $lib"; exit 1; }
  case "$lib" in
    *.so*) symbols=$("$nm_tool" -D --undefined-only "$lib") ;;
    *) symbols=$("$nm_tool" -A --undefined-only "$lib") ;;
  esac || { echo "FAIL: $nm_tool could not read $lib"; exit 1; }
  hits=$(grep -w -E '__cxa_thread_atexit(_impl)?' <<< "$symbols")
  if [ -n "$hits" ]; then
    echo "FAIL: $lib registers a thread_local destructor:"; printf '%s\n' "$hits"; bad=1
  fi
done
[ "$bad" = 0 ] && echo "ok: $# libraries, no thread_local destructor"
exit "$bad"
