#!/usr/bin/env python3
"""Compares two graphsieve-bench-core --dump files array by array.

Usage: bench/compare_dumps.py OLD NEW
Prints, per array, whether it is bit-identical and otherwise the number of
differing entries and the maximum relative difference; exits 1 when any
array differs in length. Only the standard library (the arrays can hold
~50M floats: a few seconds each when they differ).
"""
import array
import struct
import sys

NAMES = ["geff", "hardness", "uncertainty", "propagated_score", "score", "rate", "node_records", "node_rows"]


def read(path):
    out = {}
    with open(path, "rb") as f:
        for name in NAMES:
            (n,) = struct.unpack("<Q", f.read(8))
            out[name] = f.read(4 * n)
        (out["rho"],) = struct.unpack("<d", f.read(8))
    return out


def main():
    old, new = read(sys.argv[1]), read(sys.argv[2])
    bad = False
    for name in NAMES:
        a, b = old[name], new[name]
        if len(a) != len(b):
            print(f"{name}: LENGTH differs ({len(a) // 4} vs {len(b) // 4})")
            bad = True
            continue
        if a == b:
            print(f"{name}: {len(a) // 4} floats, bit-identical")
            continue
        fa, fb = array.array("f", a), array.array("f", b)
        diff, worst = 0, 0.0
        for x, y in zip(fa, fb):
            if x != y:
                diff += 1
                worst = max(worst, abs(x - y) / max(abs(x), abs(y)))
        print(f"{name}: {len(fa)} floats, {diff} differ, max relative difference {worst:.3g}")
    ro, rn = old["rho"], new["rho"]
    print(f"rho: {ro!r} vs {rn!r}" + (" (identical)" if ro == rn else f" (relative {abs(ro - rn) / abs(ro):.3g})"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
