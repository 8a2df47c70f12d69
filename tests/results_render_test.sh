#!/usr/bin/env bash
# docs/render_results.py renders what the replay measured: a short recording replayed under two
# profiles, rendered; every strategy of every profile has its row with the replay's own figures,
# the summary of the defaults has its row per profile, and the page names its commit and machine. usage: tests/results_render_test.sh BUILD_DIR WORK_DIR
set -euo pipefail
bin="${1:?usage: results_render_test.sh BUILD_DIR WORK_DIR}"
work="${2:?usage: results_render_test.sh BUILD_DIR WORK_DIR}"
mkdir -p "$work"
${KS_RUN-} "$bin/kinesync-server" --no-network --duration 4 --characters 2 --teleport-every 2 --seed 3 --record "$work/r.ksrec" > /dev/null
${KS_RUN-} "$bin/kinesync-replay" "$work/r.ksrec" --profile all --strategy all --quiet --json "$work/r.json" > /dev/null
python3 docs/render_results.py --replay "test=$work/r.json" --out "$work/RESULTS.md"
python3 - "$work/r.json" "$work/RESULTS.md" <<'PY'
import json, re, sys
runs = json.load(open(sys.argv[1]))
page = open(sys.argv[2]).read()
problems = []
if not re.search(r'Commit [0-9a-f]{7}', page) or 'machine:' not in page:
    problems.append('no commit or machine in the header')
summary, _, recording = page.partition('\n## Test recording')
sections = recording.split('\n### ')[1:]
# The summary of the defaults: a row per profile for this recording, with the replay's figures.
for run in runs:
    by = {r['strategy']: r for r in run['results']}
    part = summary.split('\n### %s\n' % run['profile']['name'])
    row = next((l for l in part[1].split('\n') if l.startswith('| test |')), None) if len(part) == 2 else None
    if row is None:
        problems.append('summary %s: no row' % run['profile']['name'])
        continue
    cells = [c.strip() for c in row.strip('|').split('|')]
    for col, strategy in ((2, 'deadblend+sod'), (7, 'deadblend+sod+ahead')):
        want = by.get(strategy)
        if want is None:
            problems.append('summary %s: the replay has no %s' % (run['profile']['name'], strategy))
        elif abs(float(cells[col]) - want['present_err_cm']['mean']) > 0.006 * max(1, want['present_err_cm']['mean']):
            problems.append('summary %s/%s: %s against %s' % (run['profile']['name'], strategy, cells[col],
                                                            want['present_err_cm']['mean']))
if len(sections) != len(runs):
    problems.append('%d profile sections for %d runs' % (len(sections), len(runs)))
for run, sec in zip(runs, sections):
    if not sec.startswith(run['profile']['name']):
        problems.append('section %r is not profile %s' % (sec[:20], run['profile']['name']))
    for r in run['results']:
        row = next((l for l in sec.split('\n') if l.startswith('| %s |' % r['strategy'])), None)
        if row is None:
            problems.append('%s/%s: no row' % (run['profile']['name'], r['strategy']))
            continue
        cells = [c.strip() for c in row.strip('|').split('|')]
        if cells[4] != str(r['pops']) or abs(float(cells[1]) - r['present_err_cm']['mean']) > 0.006 * max(1, r['present_err_cm']['mean']):
            problems.append('%s/%s: row %s against pops %s, present %s' % (run['profile']['name'], r['strategy'], cells,
                                                                        r['pops'], r['present_err_cm']['mean']))
if problems:
    sys.exit('FAIL: ' + '; '.join(problems))
print('results page: %d profiles, %d rows, each with the replay\'s figures' % (len(runs), sum(len(r['results']) for r in runs)))
PY
