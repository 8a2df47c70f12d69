#!/usr/bin/env bash
# Interop: a client of another build (the Windows kinesync-capi-remote under wine64, or another
# architecture's under qemu) and the build machine's Linux client, side by side on one Linux
# kinesync-server that requires connect tokens, for 25 s. On every snapshot both saw (tick,
# character; at least 2,000), the world joint positions are the same floats
# (tests/support/compare_poses.py, exact): one arithmetic order whatever the architecture. A
# deliberately altered Linux client (KS_REMOTE_ALTERED_FK: its own FK, quaternion sums in another
# order) beside them must be caught. A token issued with another key is refused (TokenInvalid).
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
issue "$work/k.key" 10 "$work/altered.kstoken"

"${emulator[@]}" "$remote" 127.0.0.1 "$port" 25 "$work/remote.txt" "$work/remote.kstoken" > "$work/remote.log" 2>&1 &
remote_pid=$!
pids+=("$remote_pid")
KS_REMOTE_ALTERED_FK=1 "$host/kinesync-capi-remote" 127.0.0.1 "$port" 25 "$work/altered.txt" "$work/altered.kstoken" \
  > "$work/altered.log" 2>&1 &
altered_pid=$!
pids+=("$altered_pid")
"$host/kinesync-capi-remote" 127.0.0.1 "$port" 25 "$work/linux.txt" "$work/linux.kstoken" > "$work/linux.log" 2>&1 \
  || fail "Linux client: $(cat "$work/linux.log")"
wait "$remote_pid" || fail "client under test: $(cat "$work/remote.log")"
wait "$altered_pid" || fail "altered client: $(cat "$work/altered.log")"
echo "client under test: $(tail -1 "$work/remote.log")"
compare() { python3 "$(dirname "${BASH_SOURCE[0]}")/support/compare_poses.py" "$1" "$work/linux.txt" exact "$2" "Linux client" 2000; }
compare "$work/remote.txt" "client under test" || fail "poses differ"
# The comparison can fail: the client whose FK adds in another order is caught.
if compare "$work/altered.txt" "altered client"; then fail "a client with FK in another order went unnoticed"; fi

set +e
"${emulator[@]}" "$remote" 127.0.0.1 "$port" 20 "$work/bad.txt" "$work/bad.kstoken" > "$work/bad.log" 2>&1
rc=$?
set -e
# 9: KS_DISCONNECT_TOKEN_INVALID
[ "$rc" = 3 ] && grep -q "^refused: 9 " "$work/bad.log" || fail "a token of another key: exit $rc, $(cat "$work/bad.log")"
echo "a token of another key: $(cat "$work/bad.log")"
echo "interop ok"
