#!/usr/bin/env bash
# The replay viewer (kinesync-replay --view) in headless Chromium.
# usage: tests/viewer_test.sh BUILD_DIR WORK_DIR   (from the repository root; exit 77 = skipped)
#
# Records 6 s of built-in motion (2 characters, teleports), writes a viewer of its broadband replay,
# opens the page from disk at a frame where interp visibly lags the truth and checks, from the
# page's #ks-state JSON (read by tests/support/page.py, which waits in real time for the state each
# step needs, under a deadline): the page is ready without error, at that frame, and
# every stream's root for every character matches the replay's JSON "view_roots" within 2 mm (null
# where the JSON has none), the +ahead strategies among them, with truth and interp more than 1 cm apart.
# Then: opened without a frame it plays; opened before snap's first pop with mark=next it lands on it. Then takes two screenshots
# (overlay, and side by side) and checks, with tests/support/check_png.py, that neither the page
# nor its 3D view is blank and that the 3D view shows tinted ghosts.
set -euo pipefail

bin="${1:?usage: viewer_test.sh BUILD_DIR WORK_DIR}"
work="${2:?usage: viewer_test.sh BUILD_DIR WORK_DIR}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
browser="${CHROMIUM:-chromium}"

if ! command -v "$browser" > /dev/null 2>&1; then
  echo "SKIP: '$browser' is not on PATH; the viewer test needs headless Chromium (Debian: apt-get install chromium)"
  exit 77
fi

fail() { echo "FAIL: $*"; exit 1; }
show_log() { [ -f "$1" ] && { echo "--- $1 (last lines):"; tail -n 20 "$1"; }; return 0; }

mkdir -p "$work"
work="$(cd "$work" && pwd)"
rm -rf "$work/view" "$work/chromium-profile" "$work"/shot*.png "$work"/state*.json
start=$(date +%s)

# 1. A short recording and its viewer.
if ! ${KS_RUN-} "$bin/kinesync-server" --no-network --duration 6 --characters 2 --teleport-every 3 --seed 5 \
    --record "$work/r.ksrec" > "$work/server.log" 2>&1; then
  show_log "$work/server.log"; fail "kinesync-server could not record"
fi
if ! ${KS_RUN-} "$bin/kinesync-replay" "$work/r.ksrec" --profile broadband --view "$work/view" --json "$work/r.json" --quiet \
    > "$work/replay.log" 2>&1; then
  show_log "$work/replay.log"; fail "kinesync-replay --view failed"
fi
for f in index.html viewer-state.js viewer-load.js viewer-scene.js viewer-playback.js viewer.js viewer.css three.min.js OrbitControls.js \
    replay.ksview replay.ksview.js; do
  [ -s "$work/view/$f" ] || fail "the viewer directory lacks $f"
done

# 2. The frame to look at: of the view_roots samples with both truth and interp, away from the
# ends, the one where interp lags the truth most.
pick=$(python3 - "$work/r.json" <<'EOF'
import json, math, sys
doc = json.load(open(sys.argv[1]))
if isinstance(doc, list):
    doc = next((d for d in doc if 'view_roots' in d), {})
samples = doc.get('view_roots')
if not samples:
    sys.exit('r.json has no view_roots')
last = max(s['frame'] for s in samples)
both = [s for s in samples if 'truth' in s['roots'] and 'interp' in s['roots']]
if not both:
    sys.exit('no view_roots sample has both truth and interp')
middle = [s for s in both if 0.1 * last <= s['frame'] <= 0.9 * last] or both
best = max(middle, key=lambda s: math.dist(s['roots']['truth'], s['roots']['interp']))
print(best['frame'], best['character'])
EOF
) || fail "cannot choose a frame from $work/r.json"
read -r frame character <<< "$pick"

url="file://$work/view/index.html?frame=$frame&character=$character"
browser_cmd=("$browser" --headless=new --no-sandbox --no-first-run --disable-extensions --hide-scrollbars
             --use-angle=swiftshader --enable-unsafe-swiftshader --window-size=1280,720 --user-data-dir="$work/chromium-profile")
: > "$work/chromium.log"
# state_of QUERY CONDITION OUT: the page's #ks-state JSON once CONDITION (Python, on `s`) holds for
# it, or the last one at the deadline (the checks below then say what is wrong).
state_of() {
  if ! timeout 120 python3 "$here/support/page.py" state "file://$work/view/index.html?$1" "$2" -- "${browser_cmd[@]}" \
      > "$3" 2>> "$work/chromium.log"; then
    [ -s "$3" ] || { show_log "$work/chromium.log"; fail "chromium did not show the page ($1)"; }
  fi
}
ready_or_error="s.get('ready') or s.get('error') is not None"

# 3. The page's state at that frame.
state_of "frame=$frame&character=$character" "$ready_or_error" "$work/state.json"
python3 - "$work/state.json" "$work/r.json" "$frame" "$character" <<'EOF' || fail "the page's state does not match the replay (see above; page: $url)"
import json, math, sys
state, report, frame, character = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3]), int(sys.argv[4])
if isinstance(report, list):
    report = next(d for d in report if 'view_roots' in d)
if not state:
    sys.exit('no #ks-state in the page (the viewer did not start)')
problems = []
if state.get('error') is not None:
    problems.append('the page shows an error: %s' % state['error'])
if state.get('ready') is not True:
    problems.append('the page is not ready')
if state.get('frame') != frame:
    problems.append('the page is at frame %s, asked for %d' % (state.get('frame'), frame))
if problems:
    sys.exit('; '.join(problems))
roots = state['roots']
worst, checked = 0.0, 0
for s in (s for s in report['view_roots'] if s['frame'] == frame):
    c = s['character']
    for name, page_list in roots.items():
        page = page_list[c] if c < len(page_list) else None
        want = s['roots'].get(name)
        if want is None:
            if page is not None:
                problems.append('%s, character %d: the page shows %s where the replay has none' % (name, c, page))
            continue
        if page is None:
            problems.append('%s, character %d: the page has no root, the replay has %s' % (name, c, want))
            continue
        err = max(abs(a - b) for a, b in zip(page, want))
        worst = max(worst, err)
        checked += 1
        if err > 0.002:
            problems.append('%s, character %d: page %s vs replay %s (%.1f mm apart)' % (name, c, page, want, err * 1000))
    for name in s['roots']:
        if name not in roots:
            problems.append('stream %s is in the replay but not in the page' % name)
# The recording carries the server's look-ahead: the "+ahead" strategies' run is shown beside.
for name in ('hermite+ahead', 'deadblend+sod+ahead'):
    if not roots.get(name) or roots[name][character] is None:
        problems.append('the page does not show %s (the recording has look-ahead)' % name)
truth, interp = roots['truth'][character], roots['interp'][character]
gap = math.dist(truth, interp) if truth and interp else 0.0
if gap <= 0.01:
    problems.append('truth and interp are only %.1f mm apart at frame %d' % (gap * 1000, frame))
if problems:
    print('\n'.join(problems))
    sys.exit(1)
print('page state: ready, frame %d of %d (t = %.3f s), character %d: truth %s, interp %s, %.1f cm apart; '
      '%d roots (%d streams x %d characters, where shown) within %.2f mm of view_roots'
      % (frame, state['frames'], state['t'], character, [round(v, 3) for v in truth], [round(v, 3) for v in interp],
         gap * 100, checked, len(roots), len(roots['truth']), worst * 1000))
EOF

# 4. Playing and a pop marker. Opened without a frame the page plays: it moves past frame 0.
# Opened one frame before snap's first pop with mark=next, it stops on that pop (the "mark"
# button's jump, made as the page starts).
state_of "character=$character" "s.get('error') is not None or (s.get('ready') and s.get('frame', 0) > 0)" "$work/state-play.json"
python3 - "$work/state-play.json" <<'EOF' || fail "the page did not play"
import json, sys
s = json.load(open(sys.argv[1]))
if not s.get('ready') or not s.get('frame', 0) > 0:
    sys.exit('opened without a frame, the page is at frame %s (ready %s): it did not play' % (s.get('frame'), s.get('ready')))
print('playing: from frame 0 to frame %d of %d' % (s['frame'], s['frames']))
EOF
state_of "frame=0&character=$character&strategies=snap" "$ready_or_error" "$work/state-pops.json"
first_pop=$(python3 -c 'import json, sys; p = [f for f in json.load(open(sys.argv[1])).get("pops", []) if f > 1]; print(p[0] if p else "")' "$work/state-pops.json")
[ -n "$first_pop" ] || fail "snap shows no pop for character $character (the marker test needs one)"
state_of "frame=$((first_pop - 1))&character=$character&strategies=snap&mark=next" "$ready_or_error" "$work/state-mark.json"
python3 - "$work/state-mark.json" "$first_pop" <<'EOF' || fail "the next-marker jump did not land on the pop"
import json, sys
s, want = json.load(open(sys.argv[1])), int(sys.argv[2])
if s.get('frame') != want or s.get('playing'):
    sys.exit('mark=next from frame %d: at frame %s (playing %s), the pop is at frame %d' % (want - 1, s.get('frame'), s.get('playing'), want))
print('pop marker: mark=next from frame %d lands on the pop at frame %d' % (want - 1, want))
EOF

# 5. Screenshots: the overlay, then side by side. The 3D view is the page's top left (the panel is
# 340 px wide, the timeline about 175 px tall); the region leaves out the HUD's text.
shot() {  # shot FILE QUERY-SUFFIX: once the page is ready and drawn
  if ! timeout 120 python3 "$here/support/page.py" shot "$url$2" "$1" -- "${browser_cmd[@]}" > /dev/null 2>> "$work/chromium.log" \
      || [ ! -s "$1" ]; then
    show_log "$work/chromium.log"; fail "chromium did not take the screenshot $1"
  fi
  python3 "$here/support/check_png.py" "$1" --min-colours 16 --min-foreground 0.02 || fail "$1 looks blank"
  # The ghosts are the only strongly tinted things there besides the 1 m bar (about 0.3 %).
  python3 "$here/support/check_png.py" "$1" --region 0,70,900,440 --min-colours 16 --min-foreground 0.02 \
    --min-colourful 0.006 || fail "the 3D view in $1 looks blank (or shows no ghosts)"
}
shot "$work/shot.png" ""
shot "$work/shot-side.png" "&side=1&strategies=interp,deadblend%2Bsod,snap"

echo "viewer ok in $(( $(date +%s) - start )) s: $url"
