#!/usr/bin/env bash
# Game rigs end to end, as a user runs them: kinesync-server --rig game|stress (about 250 and 1,000
# joints) with a recording, a bot under the mobile profile that must show every joint of every
# character with no entry refused, then kinesync-replay on the recording, whose default strategy's
# error must stay within a bound. Usage: rigs_cli_test.sh BIN_DIR WORK_DIR
set -euo pipefail
bin="$1"; dir="$2"
mkdir -p "$dir"
source "$(dirname "${BASH_SOURCE[0]}")/support/wait.sh"
fail() { echo "FAIL: $*"; exit 1; }
trap 'for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done' EXIT
# bot_shows LOG JOINTS PID: the bot's last stats line shows both characters whole, from over 30
# snapshots (or the bot has ended).
bot_shows() {
  local last received shown
  kill -0 "$3" 2>/dev/null || return 0
  last=$(grep 'shown' "$1" | tail -1)
  received=$(sed -n 's/.* snapshots \([0-9]*\) received.*/\1/p' <<<"$last")
  shown=$(sed -n 's/.* shown \([0-9]*\) characters, \([0-9]*\) joints$/\1 \2/p' <<<"$last")
  [ "${received:-0}" -gt 30 ] && [ "$shown" = "2 $((2 * $2))" ]
}
for rig in game stress; do
  joints=$([ "$rig" = game ] && echo 250 || echo 1000)
  # The server records until it is stopped; the bot starts once it listens, and is stopped once it
  # shows every joint of both characters (however long a loaded or sanitized build takes). Logs
  # are emptied first: a background job opens its own a moment later, and an earlier run's lines
  # must not be read meanwhile.
  : > "$dir/$rig-server.log"; : > "$dir/$rig-bot.log"
  ${KS_RUN-} "$bin/kinesync-server" --rig "$rig" --port 0 --bind 127.0.0.1 --characters 2 --seed 2 \
      --record "$dir/$rig.ksrec" > "$dir/$rig-server.log" 2>&1 &
  server=$!
  wait_for_log "$dir/$rig-server.log" 'listening on 127\.0\.0\.1:[0-9]+ ' "$server" || { cat "$dir/$rig-server.log"; fail "$rig: server did not start"; }
  port=$(listening_port "$dir/$rig-server.log")
  ${KS_RUN-} "$bin/kinesync-client" --server "127.0.0.1:$port" --profile mobile --duration 0 --stats-every 0.5 --report "$dir/$rig-bot.json" \
      > "$dir/$rig-bot.log" 2>&1 &
  bot=$!
  wait_until "$KS_DEADLINE_S" bot_shows "$dir/$rig-bot.log" "$joints" "$bot" || true
  kill -TERM "$bot" 2>/dev/null || true
  wait "$bot" || { cat "$dir/$rig-bot.log"; fail "$rig: bot failed"; }
  kill -TERM "$server"
  wait "$server" || { cat "$dir/$rig-server.log"; fail "$rig: server failed"; }
  python3 - "$dir/$rig-bot.json" "$joints" <<'PY' || fail "$rig: bot report"
import json, sys
r = json.load(open(sys.argv[1]))["clients"][0]
joints = int(sys.argv[2])
print(r)
assert r["characters_shown"] == 2, r
assert r["joints_shown"] == 2 * joints, r
assert r["characters_arriving"] == 0, r
assert r["entries_refused"] == 0, r
assert r["snapshots_received"] > 30, r
PY
  # A part too large for a datagram, or without a precision plan (a loaded server may warn of other things).
  if grep -q ": not sent" "$dir/$rig-server.log"; then cat "$dir/$rig-server.log"; fail "$rig: the server could not send something"; fi
  ${KS_RUN-} "$bin/kinesync-replay" "$dir/$rig.ksrec" --profile mobile --strategy deadblend+sod --json "$dir/$rig-replay.json" \
      > "$dir/$rig-replay.log" 2>&1 || { cat "$dir/$rig-replay.log"; fail "$rig: replay failed"; }
  python3 - "$dir/$rig-replay.json" <<'PY' || fail "$rig: replay figures"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(r["strategy"], r["present_err_cm"], r.get("bits_per_joint"))
assert 0 < r["present_err_cm"]["mean"] < 10, r["present_err_cm"]
PY
done
echo "rigs ok"
