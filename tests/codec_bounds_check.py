#!/usr/bin/env python3
"""Compares kinesync-tool codec --json rows with the bounds in tests/data/codec_bounds.json: every
clip has a bound and stays within it (bits per joint, FK error p99), and no decode mismatched.
usage: codec_bounds_check.py BOUNDS.json ROWS.json; exit 1 naming each row over its bound."""
import json
import sys


def problems(bounds, rows):
    out = []
    seen = set()
    for r in rows:
        name = r['clip']
        seen.add(name)
        b = bounds['clips'].get(name)
        if b is None:
            out.append('%s: no bound (add one to tests/data/codec_bounds.json)' % name)
            continue
        if r['bits_per_joint'] > b['bits_per_joint']:
            out.append('%s: %.3f bits per joint, bound %.2f' % (name, r['bits_per_joint'], b['bits_per_joint']))
        if r['fk_p99_cm'] > b['fk_p99_cm']:
            out.append('%s: FK error p99 %.4f cm, bound %.3f' % (name, r['fk_p99_cm'], b['fk_p99_cm']))
        if r.get('mismatches', 0) != 0:
            out.append('%s: %d decode mismatches' % (name, r['mismatches']))
    out += ['%s: bounded but not measured' % name for name in sorted(set(bounds['clips']) - seen)]
    return out


def main():
    with open(sys.argv[1]) as f:
        bounds = json.load(f)
    with open(sys.argv[2]) as f:
        rows = json.load(f)
    found = problems(bounds, rows)
    if found:
        sys.exit('codec over its bounds:\n  ' + '\n  '.join(found))
    print('codec within its bounds: %d clips' % len(rows))


if __name__ == '__main__':
    main()
