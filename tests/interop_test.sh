#!/usr/bin/env bash
# Interop: a client of another build (the Windows kinesync-capi-remote under wine64, or another
# architecture's under qemu) and the build machine's Linux client, side by side on one Linux
# kinesync-server that requires connect tokens. On every snapshot both saw (tick, character), the
# global joint positions agree within 1e-6 m (or a float32 step and a half, where a character far
# from the origin makes that larger: tests/support/compare_poses.py); a token issued with another
# key is refused there too (TokenInvalid).
# usage: interop_test.sh HOST_BUILD REMOTE_CLIENT WORK [EMULATOR...]   (exit 77: skipped)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/support/wait.sh"
host="$1"; remote="$2"; work="$3"; shift 3
emulator=(); [ -n "${1:-}" ] && read -r -a emulator <<< "$*"
if [ -z "$host" ] || [ ! -x "$host/kinesync-server" ] || [ ! -x "$host/kinesync-capi-remote" ]; then
  echo "SKIP: no Linux build to interoperate with (configure with -DKS_HOST_BUILD_DIR=<a Linux build folder>)"
  exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$work"
export WINEDEBUG=${WINEDEBUG:--all}
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done' EXIT

"$host/kinesync-token" keygen --out "$work/k.key" > /dev/null
"$host/kinesync-token" keygen --out "$work/other.key" > /dev/null
: > "$work/server.log"
"$host/kinesync-server" --bind 127.0.0.1 --port 0 --characters 3 --duration 90 --key-file "$work/k.key" > "$work/server.log" 2>&1 &
pids+=($!)
wait_for_log "$work/server.log" "listening on" "${pids[0]}" || fail "kinesync-server did not start: $(cat "$work/server.log")"
port=$(listening_port "$work/server.log")
issue() { "$host/kinesync-token" issue --key-file "$1" --server "127.0.0.1:$port" --client-id "$2" --out "$3" > /dev/null; }
issue "$work/k.key" 7 "$work/remote.kstoken"
issue "$work/k.key" 8 "$work/linux.kstoken"
issue "$work/other.key" 9 "$work/bad.kstoken"

"${emulator[@]}" "$remote" 127.0.0.1 "$port" 10 "$work/remote.txt" "$work/remote.kstoken" > "$work/remote.log" 2>&1 &
remote_pid=$!
pids+=("$remote_pid")
"$host/kinesync-capi-remote" 127.0.0.1 "$port" 10 "$work/linux.txt" "$work/linux.kstoken" > "$work/linux.log" 2>&1 \
  || fail "Linux client: $(cat "$work/linux.log")"
wait "$remote_pid" || fail "client under test: $(cat "$work/remote.log")"
echo "client under test: $(tail -1 "$work/remote.log")"
python3 "$(dirname "${BASH_SOURCE[0]}")/support/compare_poses.py" "$work/remote.txt" "$work/linux.txt" 1e-6 \
  "client under test" "Linux client" || fail "poses differ"
# The comparison can fail: the first joint's x moved by 2e-6 m in every snapshot is caught.
awk -v OFMT=%.9g '{ $3 = $3 + 2e-6; print }' "$work/remote.txt" > "$work/altered.txt"
if python3 "$(dirname "${BASH_SOURCE[0]}")/support/compare_poses.py" "$work/altered.txt" "$work/linux.txt" 1e-6 \
  altered Linux > /dev/null 2>&1; then fail "a pose moved by 2e-6 m went unnoticed"; fi

set +e
"${emulator[@]}" "$remote" 127.0.0.1 "$port" 20 "$work/bad.txt" "$work/bad.kstoken" > "$work/bad.log" 2>&1
rc=$?
set -e
# 9: KS_DISCONNECT_TOKEN_INVALID
[ "$rc" = 3 ] && grep -q "^refused: 9 " "$work/bad.log" || fail "a token of another key: exit $rc, $(cat "$work/bad.log")"
echo "a token of another key: $(cat "$work/bad.log")"
echo "interop ok"
