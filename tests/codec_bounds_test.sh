#!/usr/bin/env bash
# The codec's bits table as a regression check: kinesync-tool codec --rigs on the shared clips, each
# row within its bound in tests/data/codec_bounds.json (tests/codec_bounds_check.py). The check is
# shown able to fail: a finer rotation step (more bits for the same clips) must exceed the bounds.
# usage: tests/codec_bounds_test.sh BUILD_DIR WORK_DIR MOCAP_DIR
set -euo pipefail
bin="${1:?usage: codec_bounds_test.sh BUILD_DIR WORK_DIR MOCAP_DIR}"
work="${2:?usage: codec_bounds_test.sh BUILD_DIR WORK_DIR MOCAP_DIR}"
clips="${3:?usage: codec_bounds_test.sh BUILD_DIR WORK_DIR MOCAP_DIR}"
[ -f "$clips/cmu_02_01_walk.bvh" ] || { echo "shared mocap clips not found in $clips: codec bounds skipped"; exit 77; }
mkdir -p "$work"
here="$(cd "$(dirname "$0")" && pwd)"
${KS_RUN-} "$bin/kinesync-tool" codec --rigs --json "$work/codec.json" "$clips" > /dev/null
python3 "$here/codec_bounds_check.py" "$here/data/codec_bounds.json" "$work/codec.json"
# The broken variant: rotations twice as fine cost bits on every clip.
${KS_RUN-} "$bin/kinesync-tool" codec --rigs --rot-error 0.002 --json "$work/finer.json" "$clips" > /dev/null
if python3 "$here/codec_bounds_check.py" "$here/data/codec_bounds.json" "$work/finer.json" > "$work/finer.txt" 2>&1; then
  echo "FAIL: a codec spending more bits passed the bounds"; exit 1
fi
grep -q "bits per joint, bound" "$work/finer.txt" || { echo "FAIL: the broken variant failed for another reason:"; cat "$work/finer.txt"; exit 1; }
echo "a codec spending more bits is caught: $(grep -c 'bits per joint, bound' "$work/finer.txt") rows over their bounds"
