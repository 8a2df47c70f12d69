#!/usr/bin/env bash
# Regenerates docs/RESULTS.md: records the standard and the decisive session (the decisive one also
# without the horizon's restart after a decision, --decision-restart -1), and with VALIDATION=dir the standard session on clips never used to tune;
# replays each under every profile and strategy, sweeps the broadband frontier of the standard
# recordings (docs/frontier-*.svg), plans what each budget buys for crowds of 1 to 64 characters
# (docs/planner.svg), runs a set of benchmarks, and renders the JSON with
# docs/render_results.py (with the machine and the commit it ran on). About 15 minutes.
# It refuses a tree with uncommitted changes to tracked files (untracked files and its own outputs,
# docs/RESULTS.md and its SVGs, aside): the figures must come from a commit anyone can check out.
#   docs/generate_results.sh                 the build in build/, the clips in ../shared/mocap
#   BUILD=dir CLIPS=dir VALIDATION=dir docs/generate_results.sh
#   docs/generate_results.sh --allow-dirty   runs on local changes all the same; the page then says
#                                            its figures come from a tree no one can check out
set -euo pipefail
cd "$(dirname "$0")/.."
allow_dirty=0
for arg in "$@"; do
  case "$arg" in
    --allow-dirty) allow_dirty=1 ;;
    *) echo "generate_results: unknown option $arg (--allow-dirty is the only one)"; exit 2 ;;
  esac
done
# The tracked files that differ from HEAD, but for the script's own outputs (docs/render_results.py
# looks the same way when it writes the page's header).
local_changes() {
  git status --porcelain --untracked-files=no -- . ':(exclude)docs/RESULTS.md' ':(exclude)docs/frontier-*.svg' \
    ':(exclude)docs/planner.svg'
}
require_committed_tree() {  # allow_dirty (0 or 1)
  git rev-parse --is-inside-work-tree > /dev/null 2>&1 || return 0  # not a git checkout: the page says "unknown"
  [ -n "$(local_changes)" ] || return 0
  if [ "$1" = 1 ]; then
    echo "generate_results: --allow-dirty: the page will say its figures come from a tree with local changes"
    return 0
  fi
  echo "generate_results: uncommitted changes to tracked files (git status); commit them, or pass --allow-dirty"
  return 1
}
require_committed_tree "$allow_dirty" || exit 1
build="${BUILD:-build}"
clips="${CLIPS:-../shared/mocap}"
validation="${VALIDATION:-}"
filter="${BENCH_FILTER:-^velocity_cost/|^chain/cubic_cached/velocities/|^BM_WorldTick|^BM_Reconstruct/|^BM_ClientFrame/|^BM_(En|De)codeDelta/|^Capacity/64/16|^CapacityGameRig250|^CapacityStressRig1000|^Join|^BM_JoinDefinitions|^BM_DecodeSkeletonDefs}"
for tool in kinesync-server kinesync-replay kinesync-bench; do
  [ -x "$build/$tool" ] || { echo "generate_results: $build/$tool is missing (cmake --build $build)"; exit 1; }
done
[ -d "$clips" ] || { echo "generate_results: no clips at $clips (the shared CMU clips; CLIPS=dir)"; exit 1; }
[ -z "$validation" ] || [ -d "$validation" ] || { echo "generate_results: no validation clips at $validation"; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
record() {  # name clips decisions [server options...]
  echo "recording and replaying $1"
  "$build/kinesync-server" --no-network --duration 60 --characters 4 --clips "$2" --teleport-every 7 --reset-every 11 \
    --seed 7 --decisions "$3" "${@:4}" --record "$work/$1.ksrec" > /dev/null
  "$build/kinesync-replay" "$work/$1.ksrec" --profile all --snapshot-hz 30 --strategy all --seed 1 --quiet \
    --json "$work/$1.json" > /dev/null
}
frontier() {  # name
  echo "sweeping the frontier of $1"
  "$build/kinesync-replay" "$work/$1.ksrec" --profile broadband --snapshot-hz 30 --strategy all --seed 1 --quiet \
    --sweep "$work/frontier-$1.svg" > /dev/null
}
# The planner: crowds of 1 to 64 characters at budgets of 64 to 1,024 kbit/s and unlimited.
planner() {
  echo "planning budgets"
  mkdir -p "$work/planner"
  for n in 1 8 32 64; do
    "$build/kinesync-server" --no-network --duration 30 --characters "$n" --clips "$clips" --teleport-every 7 \
      --reset-every 11 --seed 7 --record "$work/crowd$n.ksrec" > /dev/null
    for kbps in 64 128 256 512 1024 100000; do
      for profile in broadband mobile; do
        "$build/kinesync-replay" "$work/crowd$n.ksrec" --profile "$profile" --strategy all --seed 1 --quiet \
          --bandwidth "$kbps" --json "$work/planner/n${n}_k${kbps}_$profile.json" > /dev/null
      done
    done
    rm "$work/crowd$n.ksrec"
  done
}
record standard "$clips" standard
record decisive "$clips" decisive
record decisive-norestart "$clips" decisive --decision-restart -1
frontier standard
planner
args=(--planner "$work/planner" --replay "standard=$work/standard.json" --replay "decisive=$work/decisive.json"
      --brief "decisive-norestart=$work/decisive-norestart.json" --frontier "standard=frontier-standard.svg")
if [ -n "$validation" ]; then
  record validation "$validation" standard
  frontier validation
  args+=(--replay "validation=$work/validation.json" --frontier "validation=frontier-validation.svg"
         --validation "$(ls "$validation"/*.bvh | xargs -n1 basename | tr '\n' ' ')([FIDELITY.md](FIDELITY.md), \"The validation set\").")
fi
echo "benchmarks: $filter"
"$build/kinesync-bench" --benchmark_filter="$filter" --benchmark_format=json --benchmark_out="$work/bench.json" > /dev/null
python3 docs/render_results.py "${args[@]}" --bench "$work/bench.json" --out docs/RESULTS.md
cp "$work"/frontier-*.svg docs/  # after the page, which names the commit as it was
echo "wrote docs/RESULTS.md"
