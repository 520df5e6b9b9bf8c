#!/usr/bin/env python3
"""The README's headline numbers equal the generated tables (docs/eval/, scripts/eval-report.sh).

README.md holds, between <!-- BEGIN HEADLINE --> and <!-- END HEADLINE -->, rows
  | data, mode | model | gain over uniform (ΔAUC ± SE) | uniform's α to match (interval) |
Each gain must be the ΔAUC cell of the same (data, mode, model) row of
docs/eval/headline/headline.md, each α the default rule's cell of docs/eval/curve/curve.md
('–' where the curve was not measured, and only then). Run from the repository root.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def rows(text):
    out = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            out.append([c.strip().replace("**", "") for c in line.strip().strip("|").split("|")])
    return out


def main():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- BEGIN HEADLINE[^>]*-->(.*?)<!-- END HEADLINE -->", readme, re.S)
    if not m:
        print("README.md: no <!-- BEGIN HEADLINE --> ... <!-- END HEADLINE --> block")
        return 1
    headline = {(r[0], r[1]): r[5] for r in rows(
        (ROOT / "docs/eval/headline/headline.md").read_text(encoding="utf-8"))[1:]}
    curve_md = ROOT / "docs/eval/curve/curve.md"
    curve = {}
    if curve_md.exists():
        curve = {(r[0], r[1]): r[4] for r in rows(curve_md.read_text(encoding="utf-8"))[1:]
                 if len(r) >= 6 and r[2] == "default"}
    failures, checked = [], 0
    readme_rows = rows(m.group(1))[1:]
    if not readme_rows:
        failures.append("the HEADLINE block has no rows")
    for r in readme_rows:
        key = (r[0], r[1])
        checked += 1
        if headline.get(key) != r[2]:
            failures.append(f"{key}: README gain '{r[2]}', docs/eval/headline/headline.md "
                            f"'{headline.get(key, 'no such row')}'")
        want = curve.get(key, "–")
        if r[3] != want:
            failures.append(f"{key}: README α '{r[3]}', docs/eval/curve/curve.md '{want}'")
    for f in failures:
        print("FAIL", f)
    print(f"README headline: {checked} rows checked, {len(failures)} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
