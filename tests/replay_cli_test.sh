#!/usr/bin/env bash
# kinesync-replay from the command line, as a user pipes it: stdout and stderr into one pipe.
# Checks: no progress inside the output, the table fits 120 columns, the network options make a
# "custom" profile, --sweep and --svg write well-formed files, a bad option is refused, --honesty
# judges a pair and refuses one that parts before its decision.
set -euo pipefail
bin="$1"; dir="$2"
mkdir -p "$dir"
${KS_RUN-} "$bin/kinesync-server" --no-network --duration 4 --characters 2 --teleport-every 1.5 --reset-every 2 --seed 3 \
    --record "$dir/cli.ksrec" > "$dir/server.log" 2>&1
out=$(${KS_RUN-} "$bin/kinesync-replay" "$dir/cli.ksrec" --profile broadband --latency 80 --loss 0.02 \
    --svg "$dir/cli-time.svg" --sweep "$dir/cli-frontier.svg" --json "$dir/cli.json" 2>&1 | cat)
fail() { echo "FAIL: $*"; echo "$out"; exit 1; }
if grep -qE $'\r|: +[0-9]+ %' <<<"$out"; then fail "progress in the piped output"; fi
grep -q '^profile custom (80 ms' <<<"$out" || fail "custom profile line"
grep -q '^deadblend+sod ' <<<"$out" || fail "default strategy row"
grep -q '^sweep, custom' <<<"$out" || fail "sweep listing"
while IFS= read -r line; do
  case "$line" in recording*|plot:*|frontier:*|json:*) continue ;; esac
  [ "${#line}" -le 120 ] || fail "line longer than 120 columns: $line"
done <<<"$out"
for f in cli-time.svg cli-frontier.svg; do
  head -c 5 "$dir/$f" | grep -q '<?xml' || fail "$f not written"
  grep -q '</svg>' "$dir/$f" || fail "$f incomplete"
done
grep -q '"blackout_ms"' "$dir/cli.json" || fail "json lacks blackout_ms"
if ${KS_RUN-} "$bin/kinesync-replay" "$dir/cli.ksrec" --loss 2 > /dev/null 2>&1; then fail "loss 2 accepted"; fi
# --honesty: a recording against itself is honest (exit 0); against a run that differs from the
# start the pair is refused (exit 1, naming the tick); without --decision-tick, a usage error (2).
out=$(${KS_RUN-} "$bin/kinesync-replay" "$dir/cli.ksrec" --honesty "$dir/cli.ksrec" --decision-tick 120 2>&1) || fail "honesty of a run with itself"
grep -q ': honest$' <<<"$out" || fail "honesty summary"
${KS_RUN-} "$bin/kinesync-server" --no-network --duration 3 --characters 2 --seed 4 --record "$dir/other.ksrec" > /dev/null 2>&1
set +e
out=$(${KS_RUN-} "$bin/kinesync-replay" "$dir/cli.ksrec" --honesty "$dir/other.ksrec" --decision-tick 120 2>&1); rc=$?
[ "$rc" = 1 ] && grep -q 'part at tick' <<<"$out" || fail "a pair parting before the decision: rc $rc"
${KS_RUN-} "$bin/kinesync-replay" "$dir/cli.ksrec" --honesty "$dir/other.ksrec" > /dev/null 2>&1; rc=$?
set -e
[ "$rc" = 2 ] || fail "--honesty without --decision-tick: rc $rc"
echo "replay CLI ok"
