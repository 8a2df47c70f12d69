#!/usr/bin/env bash
# kinesync-server under an orchestrator: health, readiness and metrics over HTTP, settings from
# the environment, the SIGTERM drain (exit 0 within --drain-grace, clients told, the recording
# complete), a drain that cannot finish (exit 1 after the grace time), and under Agones the public
# address connect tokens name learnt from the SDK's GameServer (a fake sidecar).
#   ops_test.sh CHECK BUILD_DIR WORK_DIR
# CHECK: http, env, drain, drain_stuck, agones.
set -uo pipefail
check="$1"; bin="$2"; dir="$3"
mkdir -p "$dir"
source "$(dirname "${BASH_SOURCE[0]}")/support/wait.sh"
out=""
fail() { echo "FAIL ($check): $*"; [ -n "$out" ] && printf '%s\n' "$out"; [ -n "${log:-}" ] && [ -f "$log" ] && cat "$log"; exit 1; }
# The jobs still running (not a list of PIDs: one already reaped may have been reused by then).
cleanup() { local p; for p in $(jobs -p); do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

# http_get PATH: sets code and body (curl, or bash's /dev/tcp without it).
http_get() {
  if command -v curl > /dev/null; then
    code=$(curl -s -m "$KS_DEADLINE_S" -o "$dir/body" -w '%{http_code}' "http://127.0.0.1:$hport$1")
    body=$(cat "$dir/body" 2>/dev/null)
  else
    local resp
    exec 5<>"/dev/tcp/127.0.0.1/$hport" || { code=000; body=""; return; }
    printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' "$1" >&5
    resp=$(timeout "$KS_DEADLINE_S" cat <&5); exec 5<&-
    code=$(head -1 <<<"$resp" | cut -d' ' -f2)
    body=${resp#*$'\r\n\r\n'}
  fi
}

# start_server LOG ARGS...: kinesync-server on loopback with --http-port on a random free port
# (retried when taken); sets pid, hport and port (the UDP port it listens on).
start_server() {
  log="$1"; shift
  for _ in 1 2 3 4 5; do
    hport=$((20000 + RANDOM % 40000))
    : > "$log"  # emptied here: the background job opens it a moment later, an earlier run's lines meanwhile
    ${KS_RUN-} "$bin/kinesync-server" --bind 127.0.0.1 --http-port "$hport" "$@" > "$log" 2>&1 &
    pid=$!
    if wait_for_log "$log" "http: .* on 127\.0\.0\.1:$hport" "$pid"; then
      port=$(listening_port "$log")
      return 0
    fi
    wait "$pid" 2>/dev/null
    grep -q "cannot listen on" "$log" || fail "server did not start"
  done
  fail "no free port after 5 tries"
}

# stop: SIGTERM, then the exit code (rc) and how long it took (elapsed, seconds). Whether the drain
# kept to its grace time the server says itself (its exit code and drain line).
stop() {
  local t0 t1
  t0=$(date +%s.%N)
  kill -TERM "$pid"
  wait_until "$KS_DEADLINE_S" eval '! kill -0 "$pid" 2>/dev/null' || { kill -KILL "$pid"; fail "still running $KS_DEADLINE_S s after SIGTERM"; }
  wait "$pid"; rc=$?
  t1=$(date +%s.%N)
  elapsed=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
}

case "$check" in
http)
  start_server "$dir/server.log" --port 0
  http_get /readyz;  [ "$code" = 200 ] || fail "/readyz $code"; [ "$body" = ready ] || fail "/readyz body '$body'"
  http_get /healthz; [ "$code" = 200 ] || fail "/healthz $code"; [ "$body" = ok ] || fail "/healthz body '$body'"
  http_get /nope;    [ "$code" = 404 ] || fail "/nope $code"
  # A datagram too short to be a packet shows up in the metrics under its reason.
  printf 'xx' > "/dev/udp/127.0.0.1/$port"
  counted() { http_get /metrics; grep -q '^kinesync_malformed_datagrams_total [1-9]' <<<"$body"; }
  wait_until "$KS_DEADLINE_S" counted
  http_get /metrics; [ "$code" = 200 ] || fail "/metrics $code"
  out="$body"
  for m in kinesync_ticks_total kinesync_clients_connected kinesync_received_datagrams_total kinesync_sent_bytes_total \
           kinesync_tick_time_p99_seconds kinesync_refused_total kinesync_missed_ticks_total; do
    grep -q "^# TYPE $m " <<<"$body" || fail "no $m"
  done
  grep -q '^kinesync_malformed_datagrams_total 1$' <<<"$body" || fail "malformed total"
  grep -q '^kinesync_malformed_datagrams_by_reason_total{reason="too short"} 1$' <<<"$body" || fail "malformed by reason"
  ticks=$(sed -n 's/^kinesync_ticks_total //p' <<<"$body")
  [ "${ticks:-0}" -gt 0 ] || fail "no ticks"
  out=""
  # Garbage on the HTTP port gets 400 and the server goes on.
  if command -v curl > /dev/null; then
    resp=$(head -c 6000 /dev/zero | tr '\0' 'A' | curl -s -m 5 --data-binary @- -X 'BAD METHOD' "http://127.0.0.1:$hport/healthz" -o /dev/null -w '%{http_code}')
    [ "$resp" = 400 ] || fail "garbage request got $resp"
  fi
  http_get /healthz; [ "$code" = 200 ] || fail "/healthz after garbage: $code"
  stop
  [ "$rc" = 0 ] || fail "exit $rc"
  ;;
env)
  # Settings from KINESYNC_*: the UDP port, bind address and stats interval; a flag beats its variable.
  for _ in 1 2 3 4 5; do
    want=$((20000 + RANDOM % 40000))
    log="$dir/env.log"
    KINESYNC_PORT=$want KINESYNC_BIND=127.0.0.1 KINESYNC_CHARACTERS=3 KINESYNC_DURATION=0.5 KINESYNC_STATS_EVERY=0.2 \
      KINESYNC_RECORD="$dir/env.ksrec" timeout 20 ${KS_RUN-} "$bin/kinesync-server" > "$log" 2>&1; rc=$?
    grep -q "cannot listen on UDP" "$log" && continue
    break
  done
  [ "$rc" = 0 ] || fail "exit $rc"
  grep -q "listening on 127.0.0.1:$want " "$log" || fail "KINESYNC_PORT=$want / KINESYNC_BIND not used"
  grep -q "serving 3 characters" "$log" || fail "KINESYNC_CHARACTERS not used"
  [ "$(grep -c '\] stats: ' "$log")" -ge 1 ] || fail "KINESYNC_STATS_EVERY not used"
  # The recording's scenario keeps the settings that came from the environment.
  out=$(${KS_RUN-} "$bin/kinesync-tool" info "$dir/env.ksrec") || fail "KINESYNC_RECORD not used"
  grep -q "scenario .*(environment: .*KINESYNC_PORT=$want" <<<"$out" || fail "the scenario lacks the environment"
  grep -q "frames      30 (ticks 1 to 30)" <<<"$out" || fail "KINESYNC_DURATION=0.5: not 30 ticks"
  out=""
  KINESYNC_PORT=$want KINESYNC_BIND=127.0.0.1 KINESYNC_CHARACTERS=3 timeout 20 ${KS_RUN-} "$bin/kinesync-server" --port 0 --characters 1 \
    --duration 0.2 > "$log" 2>&1 || fail "exit $?"
  grep -q "listening on 127.0.0.1:$want " "$log" && fail "--port 0 lost to KINESYNC_PORT"
  grep -q "serving 1 characters" "$log" || fail "--characters lost to KINESYNC_CHARACTERS"
  # A bad value from the environment is an option error, named.
  out=$(KINESYNC_PORT=99999 timeout 20 ${KS_RUN-} "$bin/kinesync-server" --no-network --duration 0.1 2>&1); rc=$?
  [ "$rc" = 2 ] || fail "KINESYNC_PORT=99999 exit $rc"
  grep -q 99999 <<<"$out" || fail "the bad value is not named"
  # The help names the variables; so does the HTTP port's.
  out=$(${KS_RUN-} "$bin/kinesync-server" --help)
  for v in KINESYNC_PORT KINESYNC_BIND KINESYNC_MAX_CLIENTS KINESYNC_HTTP_PORT KINESYNC_DRAIN_GRACE KINESYNC_RECV_BUFFER; do
    grep -q "$v" <<<"$out" || fail "--help does not name $v"
  done
  out=""
  ;;
drain)
  # A bot connected, a recording; SIGTERM: exit 0 within the grace time, the bot told at once (not
  # timed out), the recording complete up to the last tick.
  start_server "$dir/server.log" --port 0 --record "$dir/session.ksrec" --drain-grace 2
  : > "$dir/bot.log"
  ${KS_RUN-} "$bin/kinesync-client" --server "127.0.0.1:$port" --bots 1 --duration 8 --stats-every 0.1 > "$dir/bot.log" 2>&1 &
  bot=$!
  wait_for_log "$dir/bot.log" 'connected 1 ' "$bot" || { out=$(cat "$dir/bot.log"); fail "bot did not connect"; }
  sleep 0.7  # not on a chunk boundary, most likely: a recording not closed would lack the last partial chunk
  stopped_at=$(tail -1 "$dir/bot.log" | sed -n 's/^\[ *\([0-9.]*\) s\].*/\1/p')
  http_get /readyz; [ "$code" = 200 ] || fail "/readyz before SIGTERM: $code"
  stop
  [ "$rc" = 0 ] || fail "exit $rc after SIGTERM (a drain over its 2 s grace exits 1)"
  final=$(sed -n 's/.*drained in [0-9]* ms (SIGTERM): \([0-9]*\) ticks, exit 0$/\1/p' "$log")
  [ -n "$final" ] || fail "no drain line"
  # The bot hears the goodbye: connected 0 before its 5 s timeout could have passed.
  gone() { sed -n '/connected 1 /,$p' "$dir/bot.log" | grep -qE '^\[ *[0-9.]+ s\] bots [0-9]+ connected 0 '; }
  wait_until "$KS_DEADLINE_S" gone
  gone_at=$(sed -n '/connected 1 /,$p' "$dir/bot.log" | sed -n 's/^\[ *\([0-9.]*\) s\] bots [0-9]* connected 0 .*/\1/p' | head -1)
  [ -n "$gone_at" ] || { out=$(cat "$dir/bot.log"); fail "the bot was never told"; }
  awk -v a="$stopped_at" -v b="$gone_at" 'BEGIN { exit !(b - a < 4.0) }' || { out=$(cat "$dir/bot.log"); fail "the bot left at $gone_at s, SIGTERM after $stopped_at s: timed out, not told"; }
  kill "$bot" 2>/dev/null; wait "$bot" 2>/dev/null
  out=$(${KS_RUN-} "$bin/kinesync-tool" info "$dir/session.ksrec") || fail "kinesync-tool info cannot read the recording"
  grep -q "complete    yes" <<<"$out" || fail "recording not complete"
  grep -q "frames      $final (ticks 1 to $final)" <<<"$out" || fail "recording does not end at the last tick, $final"
  ${KS_RUN-} "$bin/kinesync-replay" "$dir/session.ksrec" --profile lan --strategy snap --quiet > /dev/null 2>&1 || fail "kinesync-replay cannot read it"
  echo "drain: $elapsed s from SIGTERM to exit, $final ticks recorded"
  out=""
  ;;
drain_stuck)
  # A recording into a pipe nobody reads (a blocked disk): the stream goes on and /healthz stays
  # 200, the recording leaves out the ticks its queue cannot hold (logged, exported), and the
  # drain, which waits for the recording, gives up after the grace time with exit 1 and a message.
  rm -f "$dir/stuck.fifo"; mkfifo "$dir/stuck.fifo"
  exec 3<>"$dir/stuck.fifo"  # held open, never read
  start_server "$dir/server.log" --port 0 --characters 64 --record "$dir/stuck.fifo" --record-queue-mb 1 --drain-grace 1
  wait_for_log "$log" "recording .* falls behind \(the disk is slow or blocked\)" "$pid" || fail "no warning about the recording"
  http_get /healthz; [ "$code" = 200 ] || fail "/healthz $code with only the recording stuck: '$body'"
  http_get /metrics
  dropped=$(sed -n 's/^kinesync_recording_ticks_dropped_total \([0-9]*\)$/\1/p' <<<"$body")
  [ "${dropped:-0}" -gt 0 ] || fail "kinesync_recording_ticks_dropped_total '${dropped:-}'"
  queued=$(sed -n 's/^kinesync_recording_queue_bytes \([0-9]*\)$/\1/p' <<<"$body")
  [ "${queued:-0}" -le 1048576 ] || fail "recording queue $queued bytes, bound 1 MiB"
  stop
  exec 3<&-
  [ "$rc" = 1 ] || fail "exit $rc, expected 1"
  grep -q "did not finish within --drain-grace 1 s" "$log" || fail "no message"
  ;;
agones)
  # A fake Agones sidecar: GET /gameserver answers "not scheduled yet" twice, then (MODE ok) the
  # address 127.0.0.1 and the UDP port in $dir/udp_port, chunked like Go's net/http; MODE never:
  # never scheduled. POSTs (/ready, /health, /shutdown) get 200. Every request is logged.
  cat > "$dir/sidecar.py" <<'PY'
import http.server, json, os, sys
mode, d = sys.argv[1], sys.argv[2]
gets = 0
class Sidecar(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def note(self):
        with open(os.path.join(d, "sidecar.requests"), "a") as f:
            f.write(self.command + " " + self.path + "\n")
    def do_GET(self):
        global gets
        self.note()
        if self.path != "/gameserver":
            self.send_error(404)
            return
        gets += 1
        status = {"state": "Scheduled", "address": "", "ports": []}
        if mode == "ok" and gets > 2:
            udp = int(open(os.path.join(d, "udp_port")).read())
            status = {"state": "Scheduled", "address": "127.0.0.1", "ports": [{"name": "metrics", "port": 9}, {"name": "default", "port": udp}]}
        body = json.dumps({"object_meta": {"name": "kinesync-test", "annotations": {"agones.dev/sdk-version": "1.41.0"}},
                           "status": status}, indent=2).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for i in range(0, len(body), 100):
            piece = body[i:i + 100]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.write(b"0\r\n\r\n")
    def do_POST(self):
        self.note()
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sidecar)
with open(os.path.join(d, "sidecar.port.tmp"), "w") as f:
    f.write(str(server.server_address[1]))
os.rename(os.path.join(d, "sidecar.port.tmp"), os.path.join(d, "sidecar.port"))
server.serve_forever()
PY
  start_sidecar() {
    rm -f "$dir/sidecar.port" "$dir/sidecar.requests"
    python3 "$dir/sidecar.py" "$1" "$dir" & sidecar=$!
    wait_until "$KS_DEADLINE_S" test -f "$dir/sidecar.port"
    sport=$(cat "$dir/sidecar.port" 2>/dev/null) || fail "the fake sidecar did not start"
  }
  rm -f "$dir/k.key"
  ${KS_RUN-} "$bin/kinesync-token" keygen --out "$dir/k.key" || fail "keygen"
  start_sidecar ok
  udp=$((20000 + RANDOM % 40000)); echo "$udp" > "$dir/udp_port"
  export AGONES_SDK_HTTP_PORT="$sport" KINESYNC_KEY_FILE="$dir/k.key"
  start_server "$dir/server.log" --port "$udp"
  grep -q "agones: public address 127.0.0.1:$udp " "$log" || fail "no public address learnt"
  [ "$(grep -c '^GET /gameserver$' "$dir/sidecar.requests")" = 3 ] || fail "not 3 GET /gameserver: $(cat "$dir/sidecar.requests")"
  ${KS_RUN-} "$bin/kinesync-token" issue --key-file "$dir/k.key" --server "127.0.0.1:$udp" --client-id 7 --out "$dir/t.kstoken" || fail "issue"
  : > "$dir/client.log"
  ${KS_RUN-} "$bin/kinesync-client" --server "127.0.0.1:$udp" --token "$dir/t.kstoken" --duration 0 --stats-every 0.2 > "$dir/client.log" 2>&1 &
  client=$!
  wait_for_log "$dir/client.log" "connected 1" "$client" || { out=$(cat "$dir/client.log"); fail "a token for the learnt address did not connect"; }
  kill -TERM "$client"; wait "$client" || { out=$(cat "$dir/client.log"); fail "client with a token"; }
  stop
  [ "$rc" = 0 ] || fail "exit $rc"
  grep -q '^POST /ready$' "$dir/sidecar.requests" && grep -q '^POST /shutdown$' "$dir/sidecar.requests" \
    || fail "no /ready or /shutdown: $(cat "$dir/sidecar.requests")"
  kill "$sidecar"; wait "$sidecar" 2>/dev/null
  # Never scheduled: exit 1 after about 10 s, saying to set --public-address. With one given, no GET.
  start_sidecar never
  export AGONES_SDK_HTTP_PORT="$sport"
  log="$dir/never.log"
  t0=$(date +%s)
  timeout 60 ${KS_RUN-} "$bin/kinesync-server" --bind 127.0.0.1 --port 0 --duration 1 > "$log" 2>&1; rc=$?
  [ "$rc" = 1 ] || fail "exit $rc without an address, expected 1"
  [ $(( $(date +%s) - t0 )) -ge 9 ] || fail "gave up before 10 s"
  grep -q "cannot learn the public address .*status.address is empty.*set --public-address ADDRESS:PORT (KINESYNC_PUBLIC_ADDRESS)" "$log" \
    || fail "no clear message"
  rm -f "$dir/sidecar.requests"
  log="$dir/given.log"
  KINESYNC_PUBLIC_ADDRESS="127.0.0.1:$udp" timeout 20 ${KS_RUN-} "$bin/kinesync-server" --bind 127.0.0.1 --port 0 --duration 0.5 > "$log" 2>&1 \
    || fail "exit $? with --public-address"
  grep -q "GET /gameserver" "$dir/sidecar.requests" 2>/dev/null && fail "asked the SDK despite --public-address"
  kill "$sidecar"; wait "$sidecar" 2>/dev/null
  unset AGONES_SDK_HTTP_PORT KINESYNC_KEY_FILE
  ;;
*) fail "unknown check" ;;
esac
echo "ops $check ok"
