#!/usr/bin/env python3
"""Renders docs/RESULTS.md from kinesync-replay's and kinesync-bench's JSON (docs/generate_results.sh
runs them). Every figure in the page comes from those files; the machine and the commit are read here."""
import argparse
import json
import os
import platform
import subprocess

import render_planner

STRATEGY_LEGEND = ('interp/hermite: interpolation 100 ms in the past; extrap: dead reckoning with velocities; '
                   'deadblend: dead blending into each snapshot; deadblend+sod: the default, extrapolation with a '
                   'second-order-dynamics (sod) correction; +ahead: the same strategies showing the server\'s look-ahead')


def git(*args):
    try:
        return subprocess.run(['git', *args], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ''


def machine():
    model = ''
    try:
        with open('/proc/cpuinfo') as f:
            model = next((l.split(':', 1)[1].strip() for l in f if l.startswith('model name')), '')
    except OSError:
        pass
    return '%s, %d cores, %s %s' % (model or platform.processor() or 'unknown CPU', os.cpu_count() or 0, platform.system(),
                                    platform.release())


def fmt(v, digits=3):
    """3 significant digits, whole numbers from 100 up (no exponents)."""
    if v is None:
        return '-'
    if isinstance(v, int):
        return str(v)
    if abs(v) >= 100:
        return '%.0f' % v
    if v != 0 and abs(v) < 0.001:
        return '%.2g' % v
    return '%.*g' % (digits, v)


def load_runs(path):
    with open(path) as f:
        runs = json.load(f)
    return [runs] if isinstance(runs, dict) else runs


def replay_section(name, path):
    runs = load_runs(path)
    out = ['## %s recording' % name.capitalize(), '']
    first = runs[0]
    out.append('`%s`: snapshots %s Hz, render %s Hz, network seed %s. Per strategy: present error (cm: mean, p99), '
               'acceleration ratio (1 = as smooth as the truth), pops, teleport smear frames, settle (ms, mean), '
               'bytes/s.' % (os.path.basename(first['recording']), fmt(first['snapshot_hz']), fmt(first['render_hz']),
                             first['seed']))
    out.append('')
    for run in runs:
        p = run['profile']
        out.append('### %s (%s ms ± %s ms, loss %s %%)' % (p['name'], fmt(p['latency_ms']), fmt(p['jitter_ms']),
                                                         fmt(100 * p['loss'])))
        out.append('')
        out.append('| strategy | present mean | present p99 | accel ratio | pops | smear | settle | bytes/s |')
        out.append('|---|---|---|---|---|---|---|---|')
        for r in run['results']:
            e = r['present_err_cm']
            out.append('| %s | %s | %s | %s | %s | %s | %s | %s |' % (
                r['strategy'], fmt(e['mean']), fmt(e['p99']), fmt(r['accel_rms_ratio']), r['pops'],
                r['teleport_smear_frames'], fmt(r['teleport_settle_ms']['mean']), fmt(r['bytes_per_s'])))
        b = run['results'][0].get('blackout_ms', {})
        out.append('')
        out.append('Blackout (the network\'s share, left out of the figures): %s ms mean, %s ms max.' % (
            fmt(b.get('mean')), fmt(b.get('max'))))
        out.append('')
    return out


def summary_section(specs):
    """The defaults side by side: per profile, each recording's velocity-only default (deadblend+sod) and
    look-ahead default (deadblend+sod+ahead) against interp on the same recording."""
    recs = [(name, load_runs(path)) for name, path in specs]
    out = ['## The defaults on every recording', '',
           'Per profile and recording: interp\'s present error, then for the velocity-only default (deadblend+sod) and '
           'the look-ahead default (deadblend+sod+ahead): present error, interp\'s error over it ("x better"), '
           'acceleration ratio, pops and pops over interp\'s. The validation recording uses clips never used to tune '
           'anything (below).', '']
    profiles = [run['profile']['name'] for run in recs[0][1]]
    for prof in profiles:
        out += ['### %s' % prof, '',
                '| recording | interp err | sod err | x better | sod accel | sod pops | / interp | ahead err | x better '
                '| ahead accel | ahead pops | / interp |', '|---|---|---|---|---|---|---|---|---|---|---|---|']
        for name, runs in recs:
            run = next((r for r in runs if r['profile']['name'] == prof), None)
            if run is None:
                continue
            by = {r['strategy']: r for r in run['results']}
            it = by.get('interp')
            row = [name, fmt(it['present_err_cm']['mean']) if it else '-']
            for s in ('deadblend+sod', 'deadblend+sod+ahead'):
                r = by.get(s)
                if r is None or it is None:
                    row += ['-'] * 5
                    continue
                e = r['present_err_cm']['mean']
                row += [fmt(e), fmt(it['present_err_cm']['mean'] / e) if e else '-', fmt(r['accel_rms_ratio']),
                        str(r['pops']), fmt(r['pops'] / it['pops']) if it['pops'] else '-']
            out.append('| ' + ' | '.join(row) + ' |')
        out.append('')
    return out


def bench_section(path):
    with open(path) as f:
        doc = json.load(f)
    ctx = doc.get('context', {})
    out = ['## Benchmarks', '',
           'Google Benchmark, %s build of the benchmark library, %s; times are real time per iteration.' % (
               ctx.get('library_build_type', '?'), ctx.get('date', '?')), '',
           '| benchmark | time | unit | counters |', '|---|---|---|---|']
    for b in doc.get('benchmarks', []):
        if b.get('run_type') == 'aggregate' and b.get('aggregate_name') != 'median':
            continue
        skip = {'name', 'family_index', 'per_family_instance_index', 'run_name', 'run_type', 'repetitions',
                'repetition_index', 'threads', 'iterations', 'real_time', 'cpu_time', 'time_unit', 'aggregate_name',
                'aggregate_unit', 'error_occurred', 'error_message', 'label'}
        counters = ', '.join('%s %s' % (k, fmt(v)) for k, v in b.items() if k not in skip and isinstance(v, (int, float)))
        out.append('| `%s` | %s | %s | %s |' % (b['name'], fmt(b.get('real_time')), b.get('time_unit', ''), counters))
    out.append('')
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--replay', action='append', default=[], help='NAME=replay JSON')
    ap.add_argument('--brief', action='append', default=[], help='NAME=replay JSON, in the summary only')
    ap.add_argument('--validation', default='', help='where the validation clips came from (a sentence)')
    ap.add_argument('--frontier', action='append', default=[], help='NAME=SVG file beside the page (broadband sweep)')
    ap.add_argument('--bench', help='kinesync-bench JSON')
    ap.add_argument('--planner', help='folder of the planner\'s replay JSON (render_planner.py); its plot goes beside --out')
    ap.add_argument('--out', required=True)
    a = ap.parse_args()
    commit = git('rev-parse', '--short', 'HEAD') or 'unknown'
    # Tracked files that differ from HEAD, but for this page and its SVGs (generate_results.sh refuses
    # such a tree unless --allow-dirty; it looks the same way).
    if git('status', '--porcelain', '--untracked-files=no', '--', ':(top)', ':(top,exclude)docs/RESULTS.md',
           ':(top,exclude)docs/frontier-*.svg', ':(top,exclude)docs/planner.svg'):
        commit += ' with uncommitted local changes: these figures come from a tree no one can check out'
    lines = ['# Results', '',
             'Generated by `docs/generate_results.sh` (do not edit: run it again). Commit %s; machine: %s.' % (commit, machine()),
             '', 'Recordings: shared CMU clips, 60 s, 4 characters, a teleport about every 7 s and a reset about every 11 s '
             '(server seed 7); the decisive one changes clip and speed every 1 to 2 s per character. How each figure is '
             'measured: [FIDELITY.md](FIDELITY.md). Strategies: %s.' % STRATEGY_LEGEND, '']
    lines += ['Validation: %s' % (a.validation or 'not run (VALIDATION=dir docs/generate_results.sh).'), '']
    specs = [spec.split('=', 1) for spec in a.replay + a.brief]
    if specs:
        lines += summary_section(specs)
    if a.frontier:
        lines += ['## The frontier', '',
                  'Broadband, each strategy over a grid of its settings (`kinesync-replay R.ksrec --profile broadband '
                  '--sweep F.svg`): present error against acceleration ratio, each strategy\'s Pareto front as a line, '
                  'its default drawn large; the velocity-only (deadblend+sod) and look-ahead (+ahead) modes on each '
                  'recording.', '']
        for spec in a.frontier:
            name, svg = spec.split('=', 1)
            lines += ['%s:' % name.capitalize(), '', '![frontier, %s](%s)' % (name, svg), '']
    if a.planner:
        lines += render_planner.section(a.planner, os.path.join(os.path.dirname(a.out), 'planner.svg'), 'planner.svg', fmt)
    for spec in a.replay:
        name, path = spec.split('=', 1)
        lines += replay_section(name, path)
    if a.bench:
        lines += bench_section(a.bench)
    with open(a.out, 'w') as f:
        f.write('\n'.join(lines).rstrip('\n') + '\n')


if __name__ == '__main__':
    main()
