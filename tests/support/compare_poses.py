#!/usr/bin/env python3
"""Two clients' pose logs ("tick character x0 y0 z0 x1 ...", one line per snapshot a client showed):
the worst joint difference over the snapshots both saw, against a limit in metres, or one and a
half float32 steps of the coordinate where that is larger (12 m from the origin a float32 step is
0.95e-6 m: two builds may round a coordinate apart by one step, which the logs' nine digits can show
as 1.0e-6). LIMIT_M "exact": every coordinate the same float (nine digits give a float32 back
exactly). usage: compare_poses.py A B LIMIT_M LABEL_A LABEL_B [MIN_COMMON (default 50)]"""
import math
import sys


def load(path):
    return {(int(w[0]), int(w[1])): [float(x) for x in w[2:]] for w in (l.split() for l in open(path))}


a_path, b_path, limit_text, a_name, b_name = sys.argv[1:6]
min_common = int(sys.argv[6]) if len(sys.argv) > 6 else 50
exact = limit_text == 'exact'
limit = 0.0 if exact else float(limit_text)
a, b = load(a_path), load(b_path)
common = set(a) & set(b)
if len(common) < min_common:
    sys.exit('only %d snapshots seen by both clients (at least %d wanted)' % (len(common), min_common))
if any(len(a[k]) != len(b[k]) for k in common):
    sys.exit('the clients show different joint counts')


def allowed(x, y):
    if exact:
        return 0.0
    step = 2.0 ** (math.frexp(max(abs(x), abs(y)))[1] - 24)  # float32's step at this magnitude
    return max(limit, 1.5 * step)


worst = max(max(abs(x - y) for x, y in zip(a[k], b[k])) for k in common)
over = [(abs(x - y), allowed(x, y)) for k in common for x, y in zip(a[k], b[k]) if abs(x - y) > allowed(x, y)]
rows = sum(1 for k in common if any(x != y for x, y in zip(a[k], b[k])))
print('%s vs %s: %d snapshots in common, %d differ, worst joint difference %.3g m' % (a_name, b_name, len(common), rows, worst))
if over:
    d, tol = max(over)
    sys.exit('the %s shows poses %.3g m from the %s\'s in %d coordinates (limit %.3g m there)' % (a_name, d, b_name, len(over), tol))
