#!/usr/bin/env python3
"""Two clients' pose logs ("tick character x0 y0 z0 x1 ...", one line per snapshot a client showed):
the worst joint difference over the snapshots both saw (at least 50), against a limit in metres.
usage: compare_poses.py A B LIMIT_M LABEL_A LABEL_B"""
import sys


def load(path):
    return {(int(w[0]), int(w[1])): [float(x) for x in w[2:]] for w in (l.split() for l in open(path))}


a_path, b_path, limit, a_name, b_name = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
a, b = load(a_path), load(b_path)
common = set(a) & set(b)
if len(common) < 50:
    sys.exit('only %d snapshots seen by both clients' % len(common))
if any(len(a[k]) != len(b[k]) for k in common):
    sys.exit('the clients show different joint counts')
worst = max(max(abs(x - y) for x, y in zip(a[k], b[k])) for k in common)
print('%s vs %s: %d snapshots in common, worst joint difference %.3g m' % (a_name, b_name, len(common), worst))
if worst > limit:
    sys.exit('the %s shows poses %.3g m from the %s\'s (limit %g m)' % (a_name, worst, b_name, limit))
