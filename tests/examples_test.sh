#!/usr/bin/env bash
# The examples over loopback: game_server streams a BVH walk (the built-in walk when the shared
# clip is absent) and a procedural tail for 5 s and records the truth; game_client shows them until
# the server says goodbye, then compares with the recording. Passes when both characters were
# added and shown, the walker's loop teleport arrived, and each mean error is under 5 cm.
# Usage: examples_test.sh SERVER CLIENT WORKDIR [BVH]
set -euo pipefail
server="$1"; client="$2"; work="$3"; bvh="${4:-}"
rm -rf "$work"; mkdir -p "$work"
args=(--port 0 --seconds 5 --record "$work/truth.ksrec")
if [ -n "$bvh" ] && [ -f "$bvh" ]; then args+=(--bvh "$bvh"); else echo "(no shared clip: the built-in walk)"; fi
${KS_RUN-} "$server" "${args[@]}" > "$work/server.log" 2>&1 &
pid=$!
source "$(dirname "${BASH_SOURCE[0]}")/support/wait.sh"
wait_for_log "$work/server.log" '^port ' "$pid" || true
port=$(sed -n 's/^port \([0-9]*\)$/\1/p' "$work/server.log")
[ -n "$port" ] || { cat "$work/server.log"; echo "FAIL: the server printed no port"; exit 1; }
rc=0
${KS_RUN-} "$client" --port "$port" --seconds 20 --truth "$work/truth.ksrec" > "$work/client.log" 2>&1 || rc=$?
wait "$pid" || { cat "$work/server.log"; echo "FAIL: server exit"; exit 1; }
cat "$work/server.log" "$work/client.log"
[ "$rc" = 0 ] || { echo "FAIL: client exit $rc"; exit 1; }
grep -q ": connected 0" "$work/client.log" || { echo "FAIL: never connected"; exit 1; }
grep -q "character added 0" "$work/client.log" && grep -q "character added 1" "$work/client.log" \
  || { echo "FAIL: characters not added"; exit 1; }
grep -q "teleport 0" "$work/client.log" || { echo "FAIL: the walker's loop teleport did not arrive"; exit 1; }
for who in walker tail; do
  mean=$(sed -n "s/^character $who: .* error mean \([0-9.]*\) cm.*/\1/p" "$work/client.log")
  [ -n "$mean" ] || { echo "FAIL: no error figure for $who"; exit 1; }
  awk -v m="$mean" 'BEGIN { exit !(m < 5.0) }' || { echo "FAIL: $who mean error $mean cm >= 5 cm"; exit 1; }
done
echo "PASS"
