#!/usr/bin/env bash
# What a game links registers no thread_local destructor (no reference to __cxa_thread_atexit):
# on mingw-w64 such a destructor can run after its thread's storage is freed, and a game's threads
# exit when it likes. Found the hard way: a thread_local FlatBuffers builder crashed a Windows
# client at exit. The fix is to keep per-thread state trivially destructible.
#   thread_exit_test.sh NM LIBRARY...
set -uo pipefail
nm_tool="$1"; shift
bad=0
for lib in "$@"; do
  [ -f "$lib" ] || { echo "FAIL: no library at $lib"; exit 1; }
  case "$lib" in
    *.so*) hits=$("$nm_tool" -D --undefined-only "$lib" | grep -w -E '__cxa_thread_atexit(_impl)?' || true) ;;
    *) hits=$("$nm_tool" -A --undefined-only "$lib" 2> /dev/null | grep -w -E '__cxa_thread_atexit(_impl)?' || true) ;;
  esac
  if [ -n "$hits" ]; then
    echo "FAIL: $lib registers a thread_local destructor:"; printf '%s\n' "$hits"; bad=1
  fi
done
[ "$bad" = 0 ] && echo "ok: $# libraries, no thread_local destructor"
exit "$bad"
