#!/usr/bin/env bash
# Soak: a server and N bots through the `hostile` network profile on loopback for a while; prints
# crashes (exit status), the server's RSS at start, middle and end, its tick time p50/p99 and
# missed ticks (from its stats lines), and the bots' reconnects and final connection count.
# Usage: tests/soak.sh [SECONDS=600] [BOTS=64] [BUILD=build]
# With connect tokens (the server has a fresh key; the bots mint a token per connection, as a
# backend would, so every session is sealed); SOAK_DEV=1 runs the unauthenticated dev mode.
# Fails (exit 1) on a crash, a bot not connected at the end, or RSS at the end more than 50 %
# above the middle (a leak's shape; the start is before clients arrive).
set -uo pipefail
seconds="${1:-600}"; bots="${2:-64}"; build="${3:-build}"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
port=$((41000 + $$ % 2000))
auth=(); bot_auth=()
if [ "${SOAK_DEV:-0}" != 1 ]; then
  ${KS_RUN-} "$build/kinesync-token" keygen --out "$work/key"
  auth=(--key-file "$work/key"); bot_auth=(--key-file "$work/key")
fi
if [ ${#auth[@]} -gt 0 ]; then echo "mode: connect tokens, sealed sessions"; else echo "mode: dev (no authentication)"; fi
${KS_RUN-} "$build/kinesync-server" --port "$port" --bind 127.0.0.1 "${auth[@]}" --characters 16 --max-clients $((bots + 8)) \
  --teleport-every 10 --reset-every 15 --stats-every 5 --duration "$((seconds + 5))" > "$work/server.log" 2>&1 &
server=$!
source "$(dirname "${BASH_SOURCE[0]}")/support/wait.sh"
wait_for_log "$work/server.log" "listening on " "$server" || { cat "$work/server.log"; echo "FAIL: the server did not start"; exit 1; }
rss() { awk '/VmRSS/ { print $2 }' "/proc/$server/status" 2>/dev/null || echo 0; }
rss_start=$(rss)
${KS_RUN-} "$build/kinesync-client" --server "127.0.0.1:$port" "${bot_auth[@]}" --bots "$bots" --profile hostile --duration "$seconds" \
  --stats-every 10 --report "$work/clients.json" > "$work/client.log" 2>&1 &
client=$!
sleep $((seconds / 2)); rss_mid=$(rss)
wait "$client"; client_rc=$?
rss_end=$(rss)
wait "$server"; server_rc=$?
fail=0
echo "server exit $server_rc, client exit $client_rc"
[ "$server_rc" = 0 ] && [ "$client_rc" = 0 ] || { echo "FAIL: a crash or an error exit"; tail -5 "$work/server.log" "$work/client.log"; fail=1; }
echo "server RSS: start ${rss_start} kB, middle ${rss_mid} kB, end ${rss_end} kB"
[ "${rss_end:-0}" -le $(( ${rss_mid:-0} * 3 / 2 )) ] || { echo "FAIL: RSS grew by more than half after the middle"; fail=1; }
grep -E "\] final: " "$work/server.log" | sed 's/.*final: /server final: /'
last=$(grep -E "\] stats: " "$work/server.log" | tail -1)
echo "tick time: $(sed -n 's/.*\(tick time p50 [0-9]* us p99 [0-9]* us\).*/\1/p' <<<"$last"); $(sed -n 's/.*\(missed ticks [0-9]*\).*/\1/p' <<<"$last")"
reconnects=$(grep -o '"reconnects": [0-9]*' "$work/clients.json" | awk '{ s += $2 } END { print s + 0 }')
connected=$(grep -c '"state": "connected"' "$work/clients.json")
echo "bots: $connected of $bots connected at the end, $reconnects reconnects in all"
[ "$connected" = "$bots" ] || { echo "FAIL: not every bot connected at the end"; fail=1; }
[ "$fail" = 0 ] && echo "PASS"
exit "$fail"
