#!/usr/bin/env bash
# The same results on two architectures: this (cross-compiled, e.g. AArch64 under qemu-user through
# KS_RUN) build against a native host build (x86-64) of the same source.
#   codec   a stream recorded under loss and reordering from the real builder (kinesync-codec-stream,
#           the shared clips when present, the built-in motion otherwise): the two encoders write the
#           same bytes; each build's decoder decodes each stream to the same summary (hash) and the
#           same states, state by state (the host's stream on this architecture, this
#           architecture's stream on the host).
#   replay  the standard session (docs/generate_results.sh's, shortened to SECONDS) recorded by each
#           build's kinesync-server and replayed by its kinesync-replay under every profile and
#           strategy: every figure (the JSON without the recording's path) agrees within a relative
#           1e-3 with the host's, at its default level and with its 4-wide kernels (KS_SIMD=sse2).
#           Not bit for bit: the replay's float math (SIMD levels, libm) is not made deterministic
#           as the codec's is; the SIMD levels of one x86-64 machine differ by as much (up to 4.5e-4
#           between scalar and AVX2), and that difference is printed beside.
#   proof   the comparisons can fail: a stream with one payload byte flipped decodes to another hash
#           and other states on both builds, and a replay JSON with one figure altered by 1 % is
#           refused by the comparison used above.
# Usage: cross_arch_test.sh HOST_BUILD THIS_BUILD WORK [MOCAP_DIR [SECONDS]]
set -euo pipefail
host="$1"; this="$2"; work="$3"; mocap="${4:-}"; seconds="${5:-20}"
run=(${KS_RUN-})  # the emulator for this build's programs (empty when they run natively)
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
for p in kinesync-codec-stream kinesync-codec-decode kinesync-server kinesync-replay; do
  [ -x "$host/$p" ] || fail "the host build $host lacks $p (cmake --build $host --target $p)"
  [ -x "$this/$p" ] || fail "this build $this lacks $p"
done
arch_of() { readelf -h "$1" | sed -n "s/^ *Machine: *//p"; }
host_arch=$(arch_of "$host/kinesync-codec-decode")
this_arch=$(arch_of "$this/kinesync-codec-decode")
echo "host build: $host ($host_arch)"
echo "this build: $this ($this_arch)${KS_RUN:+, run through: $KS_RUN}"

clips=()
for c in cmu_02_01_walk cmu_35_24_run_jog cmu_05_20_dance_leaps cmu_01_01_jumps_turn_around; do
  [ -n "$mocap" ] && [ -f "$mocap/$c.bvh" ] && clips+=("$mocap/$c.bvh")
done
stream_args=(--seconds 60)
[ ${#clips[@]} -gt 0 ] && stream_args+=(--clips "${clips[@]}") || echo "(no shared clips: the built-in motion)"

echo "== codec =="
"$host/kinesync-codec-stream" "$work/host.bin" "${stream_args[@]}" > /dev/null
"${run[@]}" "$this/kinesync-codec-stream" "$work/this.bin" "${stream_args[@]}" > /dev/null
if cmp -s "$work/host.bin" "$work/this.bin"; then echo "encoders: the same $(stat -c %s "$work/host.bin") bytes"
else cmp "$work/host.bin" "$work/this.bin" || true; fail "the two encoders wrote different streams from the same inputs"; fi
fails=0
for s in host this; do
  h=$("$host/kinesync-codec-decode" "$work/$s.bin" "$work/$s.by-host.states")
  t=$("${run[@]}" "$this/kinesync-codec-decode" "$work/$s.bin" "$work/$s.by-this.states")
  printf '%-5s stream, host decoder: %s\n%-5s stream, this decoder: %s\n' "$s" "$h" "$s" "$t"
  grep -q " refused 0 " <<<"$h" || { echo "FAIL: the host decoder refused payloads of the $s stream"; fails=1; }
  [ "$h" = "$t" ] || { echo "FAIL: the $s stream decodes differently on the two architectures"; fails=1; }
  cmp -s "$work/$s.by-host.states" "$work/$s.by-this.states" || { echo "FAIL: the $s stream's states differ"; fails=1; }
done
[ "$fails" = 0 ] || exit 1
echo "decoders: the same hash and the same $(wc -l < "$work/host.by-host.states") states, both streams, both ways"

# One byte flipped in the middle of the middle record's payload: both decoders must see it.
python3 - "$work/host.bin" "$work/flipped.bin" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
assert d[:4] == b'KSCS'
o = 4
u32 = lambda: struct.unpack_from('<I', d, o)[0]
n = u32(); o += 4
for _ in range(n):
    j = u32(); o += 4 + 16 * j + 4
c = u32(); o += 4 + 4 * c
r = u32(); o += 4
records = []
for _ in range(r):
    tick, size = struct.unpack_from('<II', d, o); o += 8
    records.append((o, size)); o += size
start, size = records[len(records) // 2]
d[start + size // 2] ^= 0x10
open(sys.argv[2], 'wb').write(d)
print(f"flipped bit 4 of byte {start + size // 2} (record {len(records) // 2} of {r}, {size} bytes)")
PY
fh=$("$host/kinesync-codec-decode" "$work/flipped.bin" "$work/flipped.by-host.states" || true)
ft=$("${run[@]}" "$this/kinesync-codec-decode" "$work/flipped.bin" "$work/flipped.by-this.states" || true)
echo "flipped stream, host decoder: $fh"
echo "flipped stream, this decoder: $ft"
orig=$(sed -n 's/.* hash //p' <<<"$("$host/kinesync-codec-decode" "$work/host.bin")")
for got in "$fh" "$ft"; do
  [ "$(sed -n 's/.* hash //p' <<<"$got")" != "$orig" ] || fail "a flipped byte left the hash unchanged: the comparison cannot fail"
done
for s in host this; do
  ! cmp -s "$work/host.by-host.states" "$work/flipped.by-$s.states" || fail "a flipped byte left the states unchanged ($s decoder)"
done
echo "proof: the flipped byte changes the hash and the states on both builds"

echo "== replay (the standard session, $seconds s) =="
rec_args=(--no-network --duration "$seconds" --characters 4 --teleport-every 7 --reset-every 11 --seed 7 --decisions standard)
[ -n "$mocap" ] && [ -d "$mocap" ] && [ ${#clips[@]} -gt 0 ] && rec_args+=(--clips "$mocap")
rep_args=(--profile all --snapshot-hz 30 --strategy all --seed 1 --quiet)
"$host/kinesync-server" "${rec_args[@]}" --record "$work/host.ksrec" > /dev/null
"${run[@]}" "$this/kinesync-server" "${rec_args[@]}" --record "$work/this.ksrec" > /dev/null
"$host/kinesync-replay" "$work/host.ksrec" "${rep_args[@]}" --json "$work/host-default.json" > /dev/null
KS_SIMD=sse2 "$host/kinesync-replay" "$work/host.ksrec" "${rep_args[@]}" --json "$work/host-4wide.json" > /dev/null
KS_SIMD=scalar "$host/kinesync-replay" "$work/host.ksrec" "${rep_args[@]}" --json "$work/host-scalar.json" > /dev/null
"${run[@]}" "$this/kinesync-replay" "$work/this.ksrec" "${rep_args[@]}" --json "$work/this-default.json" > /dev/null

# compare A B TOLERANCE: every figure of two replay JSONs (not the recording's path), exactly
# (TOLERANCE 0) or within a relative TOLERANCE; prints the figures compared and the worst difference.
compare() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
a, b, tol = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), float(sys.argv[3])
n, worst, bad = 0, 0.0, []
def walk(x, y, path):
    global n, worst
    if isinstance(x, dict):
        if not isinstance(y, dict) or set(x) != set(y): bad.append(path + ': other keys'); return
        for k in x:
            if k != 'recording': walk(x[k], y[k], path + '.' + k)
    elif isinstance(x, list):
        if not isinstance(y, list) or len(x) != len(y): bad.append(path + ': other length'); return
        for i, (p, q) in enumerate(zip(x, y)): walk(p, q, f'{path}[{i}]')
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        n += 1
        d = abs(x - y) / max(abs(x), abs(y), 1e-12) if x != y else 0.0
        worst = max(worst, d)
        if d > tol: bad.append(f'{path}: {x} vs {y}')
    elif x != y: bad.append(f'{path}: {x!r} vs {y!r}')
walk(a, b, '')
print(f'{n} figures, worst relative difference {worst:.2g}' + (f', {len(bad)} beyond {tol:g}: ' + '; '.join(bad[:3]) if bad else ''))
sys.exit(1 if bad else 0)
PY
}
out=$(compare "$work/host-default.json" "$work/this-default.json" 1e-3) || fail "host default vs this build's default: $out"
echo "host default level vs this build's default: within 1e-3 ($out)"
out=$(compare "$work/host-4wide.json" "$work/this-default.json" 1e-3) || fail "host sse2 vs this build's default: $out"
echo "host 4-wide kernels (sse2) vs this build's default: within 1e-3 ($out)"
out=$(compare "$work/host-default.json" "$work/host-scalar.json" 1e-3) || true
echo "(for scale, on the host alone, default level vs scalar: $out)"
# The proof: one figure altered by 1 % is refused.
python3 - "$work/this-default.json" "$work/altered.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
r = j[0]['results'][0]
r['present_err_cm']['mean'] *= 1.01
json.dump(j, open(sys.argv[2], 'w'))
PY
if out=$(compare "$work/host-default.json" "$work/altered.json" 1e-3); then fail "an altered figure passed the comparison: $out"; fi
echo "proof: an altered figure is refused ($out)"
echo "PASS: the same streams and decoded states, bit for bit, and the same replay figures (within 1e-3) on $host_arch and $this_arch"
