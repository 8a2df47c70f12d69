#!/usr/bin/env bash
# The one-command demo: set up and build, start a headless server (built-in motion, or the BVH
# files/folders given as arguments), connect three test clients through a simulated broadband
# link for 20 s while the server records, then replay the recording for every strategy under
# every network profile and print the fidelity tables, and write a 3D viewer of the replay under
# broadband (demo-output/viewer/index.html: the truth beside every strategy).
#   ./demo.sh                      built-in motion
#   ./demo.sh ../shared/mocap      the shared CMU clips (or any BVH files/folders)
#   ./demo.sh --no-setup ...       skip apt-get (packages already installed)
set -euo pipefail
cd "$(dirname "$0")"
setup=1
clips=()
for arg in "$@"; do
  case "$arg" in
    --no-setup) setup=0 ;;
    *) clips+=("$arg") ;;
  esac
done
[ "$setup" = 1 ] && ./setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j "$jobs" --target kinesync-server kinesync-client kinesync-replay

out=demo-output
mkdir -p "$out"
port=$((41000 + RANDOM % 2000))
clip_args=()
[ ${#clips[@]} -gt 0 ] && clip_args=(--clips "${clips[@]}")
echo "== server on 127.0.0.1:$port, recording $out/session.ksrec =="
./build/kinesync-server --bind 127.0.0.1 --port "$port" --characters 6 --teleport-every 6 --reset-every 9 \
  --seed 7 --stats-every 5 --record "$out/session.ksrec" "${clip_args[@]}" > "$out/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
sleep 1
echo "== 3 clients through a simulated broadband link for 20 s =="
./build/kinesync-client --server "127.0.0.1:$port" --bots 3 --profile broadband --duration 20 \
  --report "$out/clients.json" --stats-every 5
kill -INT $server
wait $server || true
trap - EXIT
tail -n 2 "$out/server.log"
echo
echo "== replay: every strategy under every profile, 30 Hz snapshots =="
./build/kinesync-replay "$out/session.ksrec" --profile all --snapshot-hz 30 --json "$out/fidelity.json" --svg "$out/fidelity.svg" \
    --sweep "$out/frontier.svg" --quiet > "$out/replay.txt"
sed '/^sweep, /,/^$/d' "$out/replay.txt"  # the tables; the sweep's rows stay in the file
echo "the sweep's rows (each strategy over a grid of its settings): $out/replay.txt; its frontier plot: $out/frontier.svg"
echo "error over time: $out/fidelity.svg; all figures as JSON: $out/fidelity.json; client report: $out/clients.json"
echo
echo "== the decisive recording (a new clip every 1-2 s per character: where a look-ahead is often wrong) =="
./build/kinesync-server --no-network --duration 20 --characters 6 --teleport-every 6 --reset-every 9 --seed 7 \
  --decisions decisive --record "$out/decisive.ksrec" "${clip_args[@]}" > "$out/decisive.log" 2>&1
for profile in broadband mobile; do
  ./build/kinesync-replay "$out/decisive.ksrec" --profile "$profile" --snapshot-hz 30 --json "$out/decisive-$profile.json" --quiet
done
echo
echo "== the 3D viewer: truth and every strategy under broadband =="
./build/kinesync-replay "$out/session.ksrec" --profile broadband --snapshot-hz 30 --view "$out/viewer" --json "$out/viewer.json" \
    --quiet | grep -A1 '^viewer:'
echo "open the viewer:  xdg-open $out/viewer/index.html   (or: python3 -m http.server -d $out/viewer 8000, then http://localhost:8000)"
