#!/usr/bin/env bash
# Regenerates docs/RESULTS.md: records the standard and the decisive session, replays both under
# every profile and strategy, runs a set of benchmarks, and renders the JSON with
# docs/render_results.py (with the machine and the commit it ran on). About 5 minutes.
#   docs/generate_results.sh                 the build in build/, the clips in ../shared/mocap
#   BUILD=dir CLIPS=dir docs/generate_results.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD:-build}"
clips="${CLIPS:-../shared/mocap}"
filter="${BENCH_FILTER:-^velocity_cost/|^chain/cubic_cached/velocities/|^BM_WorldTick|^BM_Reconstruct/|^BM_(En|De)codeDelta/|^Capacity/64/16}"
for tool in kinesync-server kinesync-replay kinesync-bench; do
  [ -x "$build/$tool" ] || { echo "generate_results: $build/$tool is missing (cmake --build $build)"; exit 1; }
done
[ -d "$clips" ] || { echo "generate_results: no clips at $clips (the shared CMU clips; CLIPS=dir)"; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for decisions in standard decisive; do
  echo "recording and replaying the $decisions session"
  "$build/kinesync-server" --no-network --duration 60 --characters 4 --clips "$clips" --teleport-every 7 --reset-every 11 \
    --seed 7 --decisions "$decisions" --record "$work/$decisions.ksrec" > /dev/null
  "$build/kinesync-replay" "$work/$decisions.ksrec" --profile all --snapshot-hz 30 --strategy all --seed 1 --quiet \
    --json "$work/$decisions.json" > /dev/null
done
echo "benchmarks: $filter"
"$build/kinesync-bench" --benchmark_filter="$filter" --benchmark_format=json --benchmark_out="$work/bench.json" > /dev/null
python3 docs/render_results.py --replay "standard=$work/standard.json" --replay "decisive=$work/decisive.json" \
  --bench "$work/bench.json" --out docs/RESULTS.md
echo "wrote docs/RESULTS.md"
