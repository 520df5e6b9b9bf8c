#!/usr/bin/env python3
"""Counts pixels of given colours in a PNG (a screenshot the dashboard test inspects).

Usage: png_colors.py FILE.png RRGGBB[:MIN_PIXELS] ...
Prints the image size and, per colour, how many pixels are within 12 of it in every
channel; exits 1 when a colour has fewer than MIN_PIXELS (default 1), 2 when the file
is not an 8-bit RGB/RGBA PNG. Standard library only (zlib): no ImageMagick needed.
"""
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"{path}: depth {depth} colour type {colour} interlace {interlace}")
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    try:
        width, height, bpp, rows = read_png(sys.argv[1])
    except (OSError, ValueError, TypeError, zlib.error) as e:
        print(e)
        return 2
    wanted = []
    for arg in sys.argv[2:]:
        hexrgb, _, minimum = arg.partition(":")
        wanted.append((hexrgb, tuple(int(hexrgb[i:i + 2], 16) for i in (0, 2, 4)), int(minimum or 1)))
    counts = [0] * len(wanted)
    for row in rows:
        for x in range(0, width * bpp, bpp):
            r, g, b = row[x], row[x + 1], row[x + 2]
            for k, (_, (wr, wg, wb), _) in enumerate(wanted):
                if abs(r - wr) <= 12 and abs(g - wg) <= 12 and abs(b - wb) <= 12:
                    counts[k] += 1
    print(f"{sys.argv[1]}: {width}x{height}")
    ok = True
    for (hexrgb, _, minimum), n in zip(wanted, counts):
        good = n >= minimum
        ok &= good
        print(f"{'ok' if good else 'FAIL'}: #{hexrgb}: {n} pixels (need >= {minimum})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
