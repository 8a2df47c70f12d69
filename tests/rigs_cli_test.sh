#!/usr/bin/env bash
# Game rigs end to end, as a user runs them: kinesync-server --rig game|stress (about 250 and 1,000
# joints) with a recording, a bot under the mobile profile that must show every joint of every
# character with no entry refused, then kinesync-replay on the recording, whose default strategy's
# error must stay within a bound. Usage: rigs_cli_test.sh BIN_DIR WORK_DIR
set -euo pipefail
bin="$1"; dir="$2"
mkdir -p "$dir"
fail() { echo "FAIL: $*"; exit 1; }
for rig in game stress; do
  port=$((42000 + RANDOM % 20000))
  "$bin/kinesync-server" --rig "$rig" --port "$port" --bind 127.0.0.1 --duration 7 --characters 2 --seed 2 \
      --record "$dir/$rig.ksrec" > "$dir/$rig-server.log" 2>&1 &
  server=$!
  "$bin/kinesync-client" --server "127.0.0.1:$port" --profile mobile --duration 5 --report "$dir/$rig-bot.json" \
      > "$dir/$rig-bot.log" 2>&1 || { cat "$dir/$rig-bot.log"; fail "$rig: bot failed"; }
  wait "$server" || { cat "$dir/$rig-server.log"; fail "$rig: server failed"; }
  joints=$([ "$rig" = game ] && echo 250 || echo 1000)
  python3 - "$dir/$rig-bot.json" "$joints" <<'PY' || fail "$rig: bot report"
import json, sys
r = json.load(open(sys.argv[1]))["clients"][0]
joints = int(sys.argv[2])
print(r)
assert r["characters_shown"] == 2, r
assert r["joints_shown"] == 2 * joints, r
assert r["entries_refused"] == 0, r
assert r["snapshots_received"] > 30, r  # under sanitizers a 1,000-joint render takes milliseconds
PY
  if grep -qE "not sent|warn" "$dir/$rig-server.log"; then cat "$dir/$rig-server.log"; fail "$rig: the server could not send something"; fi
  "$bin/kinesync-replay" "$dir/$rig.ksrec" --profile mobile --strategy deadblend+sod --json "$dir/$rig-replay.json" \
      > "$dir/$rig-replay.log" 2>&1 || { cat "$dir/$rig-replay.log"; fail "$rig: replay failed"; }
  python3 - "$dir/$rig-replay.json" <<'PY' || fail "$rig: replay figures"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(r["strategy"], r["present_err_cm"], r.get("bits_per_joint"))
assert 0 < r["present_err_cm"]["mean"] < 10, r["present_err_cm"]
PY
done
echo "rigs ok"
