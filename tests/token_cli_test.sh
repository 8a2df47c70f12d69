#!/usr/bin/env bash
# Connect tokens from the shell: kinesync-token keygen/issue/show, a keyed kinesync-server, a
# kinesync-client with the token (connects), the same token again (refused: already used), a
# client minting its own tokens from the key, two such clients at once (each its own player; the
# same --player-id twice is refused), and a server refusing a public bind without a key.
# Usage: token_cli_test.sh BUILD_DIR
set -euo pipefail
bin="$1"
work=$(mktemp -d); trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/support/wait.sh"
# client_until LOG TEXT ARGS...: kinesync-client ARGS until its LOG has a line with TEXT, then stopped.
client_until() {
  local log="$1" text="$2"; shift 2
  ${KS_RUN-} "$bin/kinesync-client" --server "127.0.0.1:$port" --duration 0 --stats-every 0.2 "$@" > "$log" 2>&1 &
  local pid=$!
  wait_for_log "$log" "$text" "$pid" || { kill "$pid" 2>/dev/null; return 1; }
  kill -TERM "$pid"; wait "$pid"
}

# Secrets are the owner's only from the moment they exist, whatever the umask.
(umask 000; ${KS_RUN-} "$bin/kinesync-token" keygen --out "$work/k.key")
[ "$(stat -c %a "$work/k.key")" = 600 ] || fail "key file is not mode 0600 under umask 000"
ls "$work" | grep -q 'XXXXXX\|k.key.' && fail "a temporary file was left beside the key"
(umask 000; ${KS_RUN-} "$bin/kinesync-token" keygen --out "$work/k.key")  # replaced, still 0600
[ "$(stat -c %a "$work/k.key")" = 600 ] || fail "a replaced key file is not mode 0600"
grep -Eq '^[0-9a-f]{64}$' "$work/k.key" || fail "key is not 64 hex digits"
${KS_RUN-} "$bin/kinesync-server" --bind 127.0.0.1 --port 0 --key-file "$work/k.key" --characters 1 > "$work/server.log" 2>&1 &
server=$!
wait_for_log "$work/server.log" "serving" "$server" || true
port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$work/server.log" | grep -o '[0-9]*$')
[ -n "$port" ] || fail "server did not start: $(cat "$work/server.log")"
grep -q "connect tokens required" "$work/server.log" || fail "server not in token mode"

(umask 000; ${KS_RUN-} "$bin/kinesync-token" issue --key-file "$work/k.key" --server "127.0.0.1:$port" --client-id 7 --out "$work/t.kstoken")
[ "$(stat -c %a "$work/t.kstoken")" = 600 ] || fail "token file is not mode 0600 under umask 000"
# A key others can read or write is refused, naming the file and the fix.
cp "$work/k.key" "$work/open.key"; chmod 644 "$work/open.key"
if ${KS_RUN-} "$bin/kinesync-token" issue --key-file "$work/open.key" --server "127.0.0.1:$port" --out "$work/x.kstoken" > "$work/open-key.log" 2>&1; then
  fail "a key readable by others was used"
fi
grep -q "chmod 600" "$work/open-key.log" || fail "no reason for the refusal: $(cat "$work/open-key.log")"
chmod 620 "$work/open.key"
if ${KS_RUN-} "$bin/kinesync-server" --bind 127.0.0.1 --port 0 --key-file "$work/open.key" --duration 1 > "$work/open-srv.log" 2>&1; then
  fail "the server used a key writable by its group"
fi
grep -q "mode 0620" "$work/open-srv.log" || fail "server: no reason: $(cat "$work/open-srv.log")"
${KS_RUN-} "$bin/kinesync-token" show "$work/t.kstoken" > "$work/show.txt"
grep -q "client id 7" "$work/show.txt" && grep -q "server    127.0.0.1:$port" "$work/show.txt" && grep -q "(valid)" "$work/show.txt" \
  || fail "show: $(cat "$work/show.txt")"

client_until "$work/c1.log" "connected 1" --token "$work/t.kstoken" || fail "token client never connected: $(cat "$work/c1.log")"
# A refusal in clear is only noted (it may be a spoof): the client reports it at its connect timeout.
if ${KS_RUN-} "$bin/kinesync-client" --server "127.0.0.1:$port" --token "$work/t.kstoken" --duration 0 --connect-timeout 5 > "$work/c2.log" 2>&1; then
  fail "a used token connected again"
fi
grep -q "already used" "$work/c2.log" || fail "no reason for the refusal: $(cat "$work/c2.log")"
if ${KS_RUN-} "$bin/kinesync-client" --server "127.0.0.1:$port" --duration 0 --connect-timeout 5 > "$work/c3.log" 2>&1; then
  fail "a client without a token connected"
fi
client_until "$work/c4.log" "bots 3 connected 3" --key-file "$work/k.key" --bots 3 || fail "minted tokens: $(cat "$work/c4.log")"
# Two test clients minting tokens with default options are two players: both connect at once.
${KS_RUN-} "$bin/kinesync-client" --server "127.0.0.1:$port" --duration 0 --stats-every 0.2 --key-file "$work/k.key" > "$work/c5.log" 2>&1 &
first=$!
wait_for_log "$work/c5.log" "connected 1" "$first" || fail "first minting client: $(cat "$work/c5.log")"
client_until "$work/c6.log" "connected 1" --key-file "$work/k.key" || fail "a second minting client was refused: $(cat "$work/c6.log")"
# The same player id twice (what the default was): the second is refused while the first lives.
kill -TERM $first; wait $first
${KS_RUN-} "$bin/kinesync-client" --server "127.0.0.1:$port" --duration 0 --stats-every 0.2 --key-file "$work/k.key" --player-id 5 > "$work/c7.log" 2>&1 &
first=$!
wait_for_log "$work/c7.log" "connected 1" "$first" || fail "player 5: $(cat "$work/c7.log")"
if ${KS_RUN-} "$bin/kinesync-client" --server "127.0.0.1:$port" --duration 0 --connect-timeout 3 --key-file "$work/k.key" --player-id 5 > "$work/c8.log" 2>&1; then
  fail "a second session for player 5 connected"
fi
grep -q "session" "$work/c8.log" || fail "no reason for refusing player 5 twice: $(cat "$work/c8.log")"
kill -TERM $first; wait $first
kill $server; wait $server 2>/dev/null || true

if ${KS_RUN-} "$bin/kinesync-server" --bind 0.0.0.0 --port 0 --duration 1 > "$work/open.log" 2>&1; then fail "served 0.0.0.0 without a key"; fi
grep -q "without authentication" "$work/open.log" || fail "no reason: $(cat "$work/open.log")"
echo "tokens: keygen, issue, show, files 0600, open keys refused, one session per token, minted tokens, two minting clients, public bind refused"
