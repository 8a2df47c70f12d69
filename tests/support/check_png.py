#!/usr/bin/env python3
"""Checks that a PNG screenshot is not blank (python3 standard library only).

usage: check_png.py FILE [--min-colours N] [--min-foreground FRACTION] [--min-colourful FRACTION]
                    [--region X,Y,W,H]

Decodes the PNG (8-bit greyscale, RGB, grey+alpha or RGBA, non-interlaced; filters 0-4), then
counts distinct colours (within the region when given), the fraction of pixels that differ from the most common colour (the
"background"), the fraction of "colourful" pixels (channels differing by more than 64: a grey
ground and grey text are not, a tinted skeleton is) and the mean colour. Prints the figures; exits
0 when all the minimums are met, 1 when not, 2 when the file cannot be read.
"""
import argparse
import struct
import sys
import zlib
from collections import Counter

CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # colour type -> samples per pixel


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode(path):
    """Returns (width, height, channels, rows) with rows a list of bytearrays of raw samples."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError('not a PNG file (bad signature)')
    pos, idat, ihdr = 8, [], None
    while pos + 8 <= len(data):
        (n,) = struct.unpack('>I', data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if len(body) != n:
            raise ValueError('truncated %s chunk' % kind.decode('latin-1'))
        pos += 12 + n
        if kind == b'IHDR':
            ihdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat.append(body)
        elif kind == b'IEND':
            break
    if ihdr is None:
        raise ValueError('no IHDR chunk')
    width, height, depth, ctype, _comp, _filt, interlace = ihdr
    if depth != 8 or ctype not in CHANNELS:
        raise ValueError('unsupported PNG: bit depth %d, colour type %d (need 8-bit grey/RGB/RGBA)' % (depth, ctype))
    if interlace:
        raise ValueError('unsupported PNG: interlaced')
    if not idat:
        raise ValueError('no image data')
    raw = zlib.decompress(b''.join(idat))
    bpp = CHANNELS[ctype]
    stride = width * bpp
    if len(raw) < height * (stride + 1):
        raise ValueError('image data too short: %d bytes for %dx%d' % (len(raw), width, height))
    rows, prev = [], bytearray(stride)
    for y in range(height):
        at = y * (stride + 1)
        ftype = raw[at]
        line = bytearray(raw[at + 1:at + 1 + stride])
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif ftype == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ftype == 4:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                upleft = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + paeth(left, prev[i], upleft)) & 255
        elif ftype != 0:
            raise ValueError('bad filter type %d in row %d' % (ftype, y))
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def pixels(bpp, rows):
    """Yields (r, g, b) per pixel (alpha ignored; grey expanded)."""
    for line in rows:
        if bpp == 3:
            it = iter(line)
            yield from zip(it, it, it)
        elif bpp == 4:
            for i in range(0, len(line), 4):
                yield (line[i], line[i + 1], line[i + 2])
        elif bpp == 1:
            for v in line:
                yield (v, v, v)
        else:
            for i in range(0, len(line), 2):
                yield (line[i], line[i], line[i])


def main():
    ap = argparse.ArgumentParser(description='Check that a PNG is not blank.')
    ap.add_argument('file')
    ap.add_argument('--min-colours', type=int, default=16)
    ap.add_argument('--min-foreground', type=float, default=0.02, help='fraction of pixels unlike the most common colour')
    ap.add_argument('--min-colourful', type=float, default=0.0, help='fraction of pixels with channels more than 64 apart')
    ap.add_argument('--region', help='X,Y,W,H: look only at this rectangle (pixels)')
    args = ap.parse_args()
    try:
        width, height, bpp, rows = decode(args.file)
    except (OSError, ValueError, zlib.error) as e:
        print('check_png: %s: %s' % (args.file, e))
        return 2
    where = ''
    if args.region:
        try:
            x, y, w, h = (int(v) for v in args.region.split(','))
        except ValueError:
            print('check_png: --region wants X,Y,W,H')
            return 2
        x, y = max(0, x), max(0, y)
        w, h = min(w, width - x), min(h, height - y)
        if w <= 0 or h <= 0:
            print('check_png: --region %s is outside the %dx%d image' % (args.region, width, height))
            return 2
        rows = [line[x * bpp:(x + w) * bpp] for line in rows[y:y + h]]
        where = ' region %d,%d %dx%d of' % (x, y, w, h)
        width, height = w, h
    counts = Counter(pixels(bpp, rows))
    total = width * height
    (bg, bg_n), = counts.most_common(1)
    sums = [0, 0, 0]
    colourful = 0
    for (r, g, b), n in counts.items():
        if max(r, g, b) - min(r, g, b) > 64:
            colourful += n
        sums[0] += r * n
        sums[1] += g * n
        sums[2] += b * n
    mean = tuple(round(s / total, 1) for s in sums)
    fg = 1.0 - bg_n / total
    print('png%s %s: %dx%d, %d distinct colours, background #%02x%02x%02x, %.1f %% of pixels not background, '
          '%.2f %% colourful, mean colour (%s, %s, %s)'
          % (where, args.file, width, height, len(counts), bg[0], bg[1], bg[2], fg * 100, colourful / total * 100,
             mean[0], mean[1], mean[2]))
    problems = []
    if len(counts) < args.min_colours:
        problems.append('only %d distinct colours (want >= %d)' % (len(counts), args.min_colours))
    if fg < args.min_foreground:
        problems.append('only %.2f %% of pixels differ from the background (want >= %.2f %%)' % (fg * 100, args.min_foreground * 100))
    if colourful < args.min_colourful * total:
        problems.append('only %.2f %% of pixels are colourful (want >= %.2f %%)' % (colourful / total * 100, args.min_colourful * 100))
    if problems:
        print('check_png: looks blank: ' + '; '.join(problems))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
