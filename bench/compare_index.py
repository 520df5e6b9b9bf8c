#!/usr/bin/env python3
"""Compares the rates of two index.gsi files (docs/SNAPSHOT.md "The serving
index file") of the same pairs, e.g. one part built at np = 1 and at np = 4:

    bench/compare_index.py [--tolerance 1e-6] A/index.gsi B/index.gsi

Prints "identical" when every section but the unseen-pair model's JSON text
(ids, node records, sketch rows, regions, slots with their rates) is byte for
byte the same, else the number of slots whose rate differs and the largest
relative difference; and the model constants (rho, score_mean) of both when
they differ (sums over ranks add in another order: the last bits move).
Exit status 0 when the slots' items are identical and every rate is within
the relative --tolerance (default 0: identical), 1 otherwise.
"""
import json
import struct
import sys
from array import array

HEADER = struct.Struct("<8sII4QIIQ10QQQ")  # core/snapshot/index_file.h Header
K_SLOTS, K_MODEL = 8, 9
PAGE = 4096


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    h = HEADER.unpack_from(data)
    if h[0] != b"GSINDEX\n":
        sys.exit(f"compare_index.py: {path} is not an index.gsi file (bad magic)")
    slots, model_bytes, offsets = h[6], h[9], h[10:20]
    return data, slots, offsets, data[offsets[K_MODEL]:offsets[K_MODEL] + model_bytes]


def main():
    args = sys.argv[1:]
    tolerance = 0.0
    if len(args) == 4 and args[0] == "--tolerance":
        tolerance = float(args[1])
        args = args[2:]
    if len(args) != 2:
        sys.exit("usage: compare_index.py [--tolerance T] A/index.gsi B/index.gsi")
    a, slots_a, off_a, model_a = read(args[0])
    b, slots_b, off_b, model_b = read(args[1])
    status = 0
    if a[PAGE:off_a[K_MODEL]] == b[PAGE:off_b[K_MODEL]]:
        print("identical (every section but the model's JSON)")
    elif slots_a != slots_b:
        print(f"DIFFERENT: {slots_a} slots against {slots_b}")
        status = 1
    else:
        sa = array("f", a[off_a[K_SLOTS]:off_a[K_SLOTS] + 8 * slots_a])
        sb = array("f", b[off_b[K_SLOTS]:off_b[K_SLOTS] + 8 * slots_b])
        ia = array("I", a[off_a[K_SLOTS]:off_a[K_SLOTS] + 8 * slots_a])
        ib = array("I", b[off_b[K_SLOTS]:off_b[K_SLOTS] + 8 * slots_b])
        items = sum(1 for k in range(0, len(ia), 2) if ia[k] != ib[k])
        diff, worst = 0, 0.0
        for k in range(1, len(sa), 2):
            if sa[k] != sb[k]:
                diff += 1
                worst = max(worst, abs(sa[k] - sb[k]) / max(abs(sa[k]), 1e-30))
        other = "" if items or diff else " (the slots are identical; node data differs)"
        print(f"slots whose item differs: {items}; rates that differ: {diff} of {slots_a}, "
              f"largest relative difference {worst:.3g}{other}")
        status = 1 if items or worst > tolerance else 0
    if model_a != model_b:
        ma, mb = json.loads(model_a), json.loads(model_b)
        for k in ("rho", "score_mean"):
            if ma.get(k) != mb.get(k):
                print(f"model {k}: {ma.get(k)!r} against {mb.get(k)!r}")
    return status


if __name__ == "__main__":
    sys.exit(main())
