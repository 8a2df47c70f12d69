#!/usr/bin/env bash
# The command-line programs behave: bad values are refused with a message naming them and exit 2,
# --version prints "NAME VERSION" and exits 0, a client no server answers gives up, the server's
# stats line does not grow with the number of clients.
#   cli_behaviour_test.sh CHECK BUILD_DIR WORK_DIR VERSION
# CHECK: host_port, server_port, version, exit_codes, connect_timeout, stats_line, skeleton_cache.
set -uo pipefail
check="$1"; bin="$2"; dir="$3"; version="$4"
mkdir -p "$dir"
source "$(dirname "${BASH_SOURCE[0]}")/support/wait.sh"
out=""
fail() { echo "FAIL ($check): $*"; [ -n "$out" ] && printf '%s\n' "$out"; exit 1; }

# run EXPECTED_CODE CMD...: runs CMD (stdout and stderr into $out), fails unless it exits EXPECTED_CODE.
run() {
  local want="$1"; shift
  out=$(timeout 60 "$@" 2>&1); local rc=$?
  [ "$rc" = "$want" ] || fail "exit $rc, expected $want: $*"
}
# has TEXT: $out contains TEXT (fixed string).
has() { grep -qF -- "$1" <<<"$out" || fail "output lacks '$1'"; }

# A background server on a free loopback port; sets server_pid and port.
start_server() {
  local log="$1"; shift
  : > "$log"  # emptied here: the background job opens it a moment later, an earlier run's lines meanwhile
  ${KS_RUN-} "$bin/kinesync-server" --bind 127.0.0.1 --port 0 --characters 2 "$@" > "$log" 2>&1 &
  server_pid=$!
  wait_for_log "$log" 'listening on 127\.0\.0\.1:[0-9]+ ' "$server_pid" || { out=$(cat "$log"); fail "server did not start"; }
  port=$(listening_port "$log")
}
stop_server() { kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; }
# bots_until N REGEX LOG: N bots against the server until the server's LOG has a line matching
# REGEX, then stopped (SIGTERM: they exit 0).
bots_until() {
  : > "$dir/bots-$1.log"
  ${KS_RUN-} "$bin/kinesync-client" --server "127.0.0.1:$port" --bots "$1" --duration 0 --stats-every 10 > "$dir/bots-$1.log" 2>&1 &
  local bots=$!
  wait_for_log "$3" "$2" "$bots" || { kill "$bots" 2>/dev/null; out=$(cat "$dir/bots-$1.log"); fail "no line '$2' with $1 bots"; }
  kill -TERM "$bots"; wait "$bots" || { local rc=$?; out=$(cat "$dir/bots-$1.log"); fail "$1 bots: exit $rc"; }
}

case "$check" in
host_port)
  for v in nohost:abc 127.0.0.1:0 127.0.0.1:99999 127.0.0.1:65536 127.0.0.1:-5 127.0.0.1: nohost :40000; do
    run 2 ${KS_RUN-} "$bin/kinesync-client" --server "$v" --duration 1
    has "$v"
    if grep -q 'terminate\|what()' <<<"$out"; then fail "crash on --server $v"; fi
    [ "$(head -1 <<<"$out" | grep -cF -- "$v")" = 1 ] || fail "first line does not name '$v'"
  done
  run 2 ${KS_RUN-} "$bin/kinesync-client" --server nohost:abc; has "not a number"
  run 2 ${KS_RUN-} "$bin/kinesync-client" --server h:99999; has "out of range 1..65535"
  ;;
server_port)
  for v in 99999 65536 -1 abc; do
    run 2 ${KS_RUN-} "$bin/kinesync-server" --port "$v" --no-network --duration 0.1
    has "--port"; has "$v"
  done
  # 0 (any free port) and 65535 stay valid.
  run 0 ${KS_RUN-} "$bin/kinesync-server" --port 0 --no-network --duration 0.1
  run 0 ${KS_RUN-} "$bin/kinesync-server" --port 65535 --no-network --duration 0.1
  ;;
version)
  for p in kinesync-server kinesync-client kinesync-replay kinesync-tool; do
    run 0 ${KS_RUN-} "$bin/$p" --version
    [ "$out" = "$p $version" ] || fail "$p --version printed '$out', expected '$p $version'"
    run 0 ${KS_RUN-} "$bin/$p" --help
    has "--version"
  done
  ;;
exit_codes)
  for p in kinesync-server kinesync-client "kinesync-replay x.ksrec" "kinesync-tool info x.bvh"; do
    read -r -a cmd <<<"$p"
    run 2 ${KS_RUN-} "$bin/${cmd[0]}" "${cmd[@]:1}" --no-such-option
    has "--no-such-option"
  done
  run 2 ${KS_RUN-} "$bin/kinesync-replay"                      # RECORDING is required
  run 2 ${KS_RUN-} "$bin/kinesync-replay" x.ksrec --profile moon
  run 2 ${KS_RUN-} "$bin/kinesync-tool"                        # a subcommand is required
  run 2 ${KS_RUN-} "$bin/kinesync-tool" dynamics --f -1 --svg "$dir/x.svg"
  run 2 ${KS_RUN-} "$bin/kinesync-tool" codec --start -1 builtin:walk
  has "--start"
  run 2 ${KS_RUN-} "$bin/kinesync-client" --bots 0
  run 2 ${KS_RUN-} "$bin/kinesync-server" --characters 0 --no-network --duration 1
  run 2 ${KS_RUN-} "$bin/kinesync-server" --no-network          # needs --duration
  run 2 ${KS_RUN-} "$bin/kinesync-server" --tick-hz 59.94 --no-network --duration 1   # rates travel as whole numbers
  has "must be whole numbers"
  run 2 ${KS_RUN-} "$bin/kinesync-server" --snapshot-hz 25 --no-network --duration 1  # 25 does not divide 60
  # Failures while running stay 1.
  run 1 ${KS_RUN-} "$bin/kinesync-tool" info "$dir/no-such-file.bvh"
  run 1 ${KS_RUN-} "$bin/kinesync-replay" "$dir/no-such-file.ksrec"
  ;;
connect_timeout)
  # Nothing listens on UDP port 1 of the loopback (run's own timeout would end a client that never gives up).
  run 1 ${KS_RUN-} "$bin/kinesync-client" --server 127.0.0.1:1 --connect-timeout 1
  has "kinesync-client: no server answered at 127.0.0.1:1 within 1 s"
  # A --duration shorter than the timeout that never connects fails as well.
  run 1 ${KS_RUN-} "$bin/kinesync-client" --server 127.0.0.1:1 --duration 1
  has "no server answered at 127.0.0.1:1 within 1 s"
  run 2 ${KS_RUN-} "$bin/kinesync-client" --connect-timeout -1
  # A client that does connect is not cut off by the timeout.
  start_server "$dir/server.log"
  run 0 ${KS_RUN-} "$bin/kinesync-client" --server "127.0.0.1:$port" --connect-timeout 1 --duration 2.5
  has "connected 1"
  stop_server
  ;;
stats_line)
  # One bot, then 40: the stats line must not grow with them; per-client details are at debug level.
  start_server "$dir/server.log" --stats-every 0.5 --log-level debug --max-clients 64
  bots_until 1 '\] stats: .*\| clients 1 \|' "$dir/server.log"
  bots_until 40 '\] stats: .*\| clients 40 \|' "$dir/server.log"
  stop_server
  out=$(cat "$dir/server.log")
  one=$(grep -E '\] stats: .*\| clients 1 \|' <<<"$out" | awk '{ print length }' | sort -n | tail -1)
  many=$(grep -E '\] stats: .*\| clients 40 \|' <<<"$out" | awk '{ print length }' | sort -n | tail -1)
  [ -n "$one" ] || fail "no stats line with 1 client"
  [ -n "$many" ] || fail "no stats line with 40 clients"
  # Only the digits of counts and totals may differ.
  [ "$many" -le $((one + 10)) ] || fail "stats line grows with clients: $one chars with 1, $many with 40"
  [ "$many" -le 300 ] || fail "stats line of $many chars"
  has "per client min/mean/max"
  grep -qE '\[debug\] stats: client [0-9]+ \(127\.0\.0\.1:[0-9]+\): ' <<<"$out" || fail "no per-client debug line"
  ;;
skeleton_cache)
  # The first run receives the skeleton in full and keeps it; the second offers it and gets a
  # reference. A directory that cannot be made is refused, naming the option's field.
  rm -rf "$dir/skeletons"
  start_server "$dir/server.log"
  for n in 1 2; do
    run 0 ${KS_RUN-} "$bin/kinesync-client" --server "127.0.0.1:$port" --skeleton-cache "$dir/skeletons" --duration 2.5 \
      --stats-every 1 --report "$dir/cache-$n.json"
  done
  stop_server
  out=$(cat "$dir/cache-1.json")
  has '"skeletons_by_reference": 0, "skeletons_in_full": 1, "skeleton_errors": 0, "skeleton_cache_refused": 0'
  out=$(cat "$dir/cache-2.json")
  has '"skeletons_by_reference": 1, "skeletons_in_full": 0, "skeleton_errors": 0, "skeleton_cache_refused": 0'
  ls "$dir/skeletons"/*.kskel > /dev/null 2>&1 || fail "no skeleton file kept in $dir/skeletons"
  run 2 ${KS_RUN-} "$bin/kinesync-client" --server 127.0.0.1:1 --skeleton-cache /dev/null/skeletons --duration 1
  has "skeleton_cache_dir = /dev/null/skeletons"
  ;;
*) fail "unknown check" ;;
esac
echo "cli $check ok"
