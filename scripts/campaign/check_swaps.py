#!/usr/bin/env python3
"""Checks the outputs of scripts/fault-campaign.sh's "swaps" section.

Each output is `graphsieve rates --with-version --max-batch-pairs B`: every
group of B consecutive rows is one GetSamplingRate call, and its
snapshot_version column names the version(s) that answered ("a+b" would mean a
batch answered by two versions). Every row's rate must equal, exactly, the
rate that version's builder exported for the pair (--export of each publish).
"""
import argparse
import csv
import glob
import os
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exports", required=True)
    ap.add_argument("--outputs", required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--published", type=int, required=True)
    ap.add_argument("--adopted", type=int, required=True)
    ap.add_argument("--failed-file", required=True)
    a = ap.parse_args()
    expected = {}
    for path in glob.glob(os.path.join(a.exports, "*.csv")):
        version = os.path.basename(path)[:-4]
        with open(path) as f:
            expected[version] = {(r["user_id"], r["item_id"]): float(r["rate"]) for r in csv.DictReader(f)}
    calls = rows = wrong_rate = mixed = unknown = 0
    versions_seen = set()
    for path in sorted(glob.glob(os.path.join(a.outputs, "*.csv"))):
        with open(path) as f:
            reader = csv.DictReader(f)
            batch_versions = set()
            n = 0
            for r in reader:
                rows += 1
                v = r["snapshot_version"]
                batch_versions.add(v)
                if "+" in v:
                    mixed += 1
                table = expected.get(v)
                if table is None:
                    unknown += 1
                elif table.get((r["user_id"], r["item_id"])) != float(r["rate"]):
                    wrong_rate += 1
                n += 1
                if n % a.batch == 0:
                    calls += 1
                    if len(batch_versions) > 1:
                        mixed += 1
                    versions_seen |= batch_versions
                    batch_versions = set()
            if n % a.batch:
                calls += 1
                versions_seen |= batch_versions
    failed_runs = 0
    if os.path.exists(a.failed_file):
        with open(a.failed_file) as f:
            failed_runs = len(f.read().splitlines())
    errors = sum(1 for p in glob.glob(os.path.join(a.outputs, "*.err"))
                 if "error" in open(p).read().lower())
    print(f"RESULT swaps: {calls} GetSamplingRate calls ({rows} pairs, batches of {a.batch}) in "
          f"{a.seconds:.0f} s ({calls / a.seconds:.0f} calls/s) while {a.published} versions were "
          f"published; server adopted {a.adopted} versions (incl. the first); "
          f"{len(versions_seen)} distinct versions answered")
    print(f"RESULT swaps: failed client runs {failed_runs} (runs with an error message: {errors}); "
          f"calls answered by more than one version: {mixed}; rows with a rate different from "
          f"their version's export: {wrong_rate}; rows naming an unknown version: {unknown}")
    bad = failed_runs + errors + mixed + wrong_rate + unknown
    if a.adopted - 1 < a.published:
        print(f"NOTE swaps: {a.published - a.adopted + 1} published versions were superseded "
              f"before the refresher adopted them")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
