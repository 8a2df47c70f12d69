"""The bandwidth planner of docs/RESULTS.md: what each per-client budget buys for a crowd of a given
size. Reads kinesync-replay JSON files named n<characters>_k<kbit/s>_<profile>.json (docs/
generate_results.sh writes them) and renders tables and an SVG plot (no plotting library)."""
import json
import math
import os
import re

DEFAULTS = [('deadblend+sod', 'velocity-only default (deadblend+sod)'),
            ('deadblend+sod+ahead', 'look-ahead default (deadblend+sod+ahead)')]
COLOURS = ['#1b6ca8', '#d1495b', '#66a182', '#edae49', '#6d597a', '#2e4057']
UNLIMITED = 100000  # kbit/s: the reference run, labelled "unlimited"


def label(k):
    return 'unlimited' if k >= UNLIMITED else '%d kbit/s' % k


def load(folder):
    """{(profile, characters, kbps): {strategy: result}} and the bytes/s per (profile, characters, kbps, strategy)."""
    runs = {}
    for name in sorted(os.listdir(folder)):
        m = re.fullmatch(r'n(\d+)_k(\d+)_(\w+)\.json', name)
        if not m:
            continue
        with open(os.path.join(folder, name)) as f:
            run = json.load(f)
        runs[(m.group(3), int(m.group(1)), int(m.group(2)))] = {r['strategy']: r for r in run['results']}
    return runs


def axes(runs):
    profiles = sorted({k[0] for k in runs}, key=lambda p: ['lan', 'broadband', 'mobile', 'hostile'].index(p)
                      if p in ['lan', 'broadband', 'mobile', 'hostile'] else 9)
    counts = sorted({k[1] for k in runs})
    budgets = sorted({k[2] for k in runs})
    return profiles, counts, budgets


def capacity(runs, profile, strategy, kbps, counts, budgets, slack=1.1):
    """The most characters whose error at `kbps` is within `slack` of their error at the largest budget
    (the unlimited reference)."""
    best = 0
    for n in counts:
        here, top = runs.get((profile, n, kbps)), runs.get((profile, n, budgets[-1]))
        if here and top and strategy in here and strategy in top:
            if here[strategy]['present_err_cm']['mean'] <= slack * top[strategy]['present_err_cm']['mean']:
                best = max(best, n)
    return best


def svg(runs, profiles, counts, budgets):
    """One panel per profile and default: error (cm, log) against budget (kbit/s, log), a line per crowd size."""
    pw, ph, ml, mb, mt = 330, 230, 52, 40, 28
    width, height = pw * len(DEFAULTS), ph * len(profiles)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (width, height),
           '<rect width="100%" height="100%" fill="white"/>']
    for pi, profile in enumerate(profiles):
        for di, (strategy, title) in enumerate(DEFAULTS):
            x0, y0 = di * pw + ml, pi * ph + mt
            w, h = pw - ml - 14, ph - mt - mb
            errs = [runs[(profile, n, k)][strategy]['present_err_cm']['mean'] for n in counts for k in budgets
                    if (profile, n, k) in runs and strategy in runs[(profile, n, k)]]
            if not errs:
                continue
            lo, hi = math.log10(min(errs) * 0.8), math.log10(max(errs) * 1.25)
            # The unlimited run one doubling past the largest budget.
            pos = {k: i for i, k in enumerate(budgets)}
            bx = lambda k: x0 + w * pos[k] / max(1, len(budgets) - 1)
            by = lambda e: y0 + h - h * (math.log10(e) - lo) / max(1e-9, hi - lo)
            out.append('<text x="%d" y="%d" font-weight="bold">%s, %s</text>' % (x0 - 40, y0 - 10, profile, title))
            out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>' % (x0, y0, w, h))
            for k in budgets:
                out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (bx(k), y0 + h + 14, 'inf' if k >= UNLIMITED else k))
            out.append('<text x="%.1f" y="%d" text-anchor="middle">kbit/s per client</text>' % (x0 + w / 2, y0 + h + 28))
            for e in [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50]:
                if lo <= math.log10(e) <= hi:
                    out.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (x0 - 4, by(e) + 4, e))
                    out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>' % (x0, x0 + w, by(e), by(e)))
            out.append('<text x="%d" y="%d" transform="rotate(-90 %d %d)" text-anchor="middle">error, cm</text>'
                       % (x0 - 38, y0 + h // 2, x0 - 38, y0 + h // 2))
            for ci, n in enumerate(counts):
                pts = [(bx(k), by(runs[(profile, n, k)][strategy]['present_err_cm']['mean'])) for k in budgets
                       if (profile, n, k) in runs and strategy in runs[(profile, n, k)]]
                colour = COLOURS[ci % len(COLOURS)]
                out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                           % (colour, ' '.join('%.1f,%.1f' % p for p in pts)))
                for x, y in pts:
                    out.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (x, y, colour))
                out.append('<text x="%d" y="%d" fill="%s">%d characters</text>' % (x0 + w - 80, y0 + 12 + 12 * ci, colour, n))
    out.append('</svg>')
    return '\n'.join(out) + '\n'


def section(folder, svg_path, svg_name, fmt):
    runs = load(folder)
    if not runs:
        return []
    profiles, counts, budgets = axes(runs)
    with open(svg_path, 'w') as f:
        f.write(svg(runs, profiles, counts, budgets))
    out = ['## What a budget buys', '',
           'The planner: crowds of %s characters (shared CMU clips, 30 s, a teleport about every 7 s and a reset about '
           'every 11 s, server seed 7), every character in view of one client, replayed (network seed 1) with a '
           'per-client budget of %s kbit/s and on an unlimited link. Per default: present error (cm, mean) and pops; the bytes are what the '
           'client received (kB/s, unsealed: a sealed session adds 18-20 bytes to each datagram). How the budget is '
           'spent: [NETWORK.md](NETWORK.md), "What the budget buys".'
           % (', '.join(str(n) for n in counts), ', '.join(str(k) for k in budgets if k < UNLIMITED)), '',
           '![error against budget](%s)' % svg_name, '']
    for profile in profiles:
        for strategy, title in DEFAULTS:
            out += ['### %s, %s' % (profile, title), '',
                    '| characters | ' + ' | '.join(label(k) for k in budgets) + ' | 256 kbit/s against unlimited |',
                    '|---|' + '---|' * (len(budgets) + 1)]
            for n in counts:
                cells = []
                for k in budgets:
                    r = runs.get((profile, n, k), {}).get(strategy)
                    cells.append('-' if r is None else '%s cm, %s pops, %s kB/s' % (
                        fmt(r['present_err_cm']['mean']), r['pops'], fmt(r['bytes_per_s'] / 1000.0)))
                top = runs.get((profile, n, budgets[-1]), {}).get(strategy)
                here = runs.get((profile, n, 256), {}).get(strategy)
                fits = '-' if not (top and here) else '%+.0f %% error' % (
                    100 * (here['present_err_cm']['mean'] / top['present_err_cm']['mean'] - 1))
                out.append('| %d | %s | %s |' % (n, ' | '.join(cells), fits))
            out.append('')
            if 256 in budgets:
                out += ['At the default 256 kbit/s, up to %d characters (of those run) show within 10 %% of their error on '
                        'an unlimited link.' % capacity(runs, profile, strategy, 256, counts, budgets), '']
    return out
