#!/usr/bin/env python3
"""Lists the skipped tests of a ctest run, with the reason each printed, and
under CI=true fails unless every reason is on tests/allowed-skips.txt.

    scripts/check-skips.py CTEST_JUNIT.xml [--allowed tests/allowed-skips.txt]

CTEST_JUNIT.xml is `ctest --output-junit`'s report. A test counts as skipped
when CTest says so (a "[  SKIPPED ]" line of a discovered gtest, exit 77 of a
world test: cmake/world_test.cmake); its reasons are the messages gtest prints
after "<file>:<line>: Skipped". A skipped test that printed no reason is not
allowed either. Exit 0 when allowed (or not under CI), 1 otherwise, 2 on a
report that cannot be read.
"""
import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

SKIP_LINE = re.compile(r"^.*:\d+: Skipped$")


def read_allowed(path):
    allowed = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split("|")]
            if len(parts) != 3 or not all(parts):
                sys.exit(f"check-skips: {path} line {n}: expected 'reason | test | why', got {line!r}")
            allowed[parts[0]] = (parts[1], parts[2])
    return allowed


def reasons(output):
    """The messages after each '<file>:<line>: Skipped' line, up to the gtest status line."""
    found, lines = [], output.splitlines()
    for i, line in enumerate(lines):
        if SKIP_LINE.match(line):
            message = []
            for nxt in lines[i + 1:]:
                if nxt.startswith("[  SKIPPED ]") or nxt.startswith("[       OK ]"):
                    break
                message.append(nxt)
            found.append("\n".join(message).strip())
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("junit")
    ap.add_argument("--allowed", default=os.path.join(os.path.dirname(__file__), "..", "tests",
                                                       "allowed-skips.txt"))
    a = ap.parse_args()
    try:
        root = ET.parse(a.junit).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"check-skips: cannot read {a.junit}: {e}", file=sys.stderr)
        return 2
    allowed = read_allowed(a.allowed)
    ci = os.environ.get("CI") == "true"
    skipped, refused = [], []
    for case in root.iter("testcase"):
        if case.find("skipped") is None:
            continue
        out = case.findtext("system-out") or ""
        why = reasons(out) or [""]
        for r in why:
            ok = r in allowed
            skipped.append((case.get("name"), r, ok))
            if not ok:
                refused.append((case.get("name"), r))
    print(f"check-skips: {len(skipped)} skip(s) in {a.junit}; allowed under CI=true "
          f"(tests/allowed-skips.txt): {len(allowed)} reason(s):")
    for reason, (test, why) in allowed.items():
        print(f"  allowed: '{reason}' ({test}: {why})")
    for name, r, ok in skipped:
        print(f"  skipped: {name}: {r or '(no reason printed)'}"
              f"{'' if ok else '  <- not on tests/allowed-skips.txt'}")
    if refused and ci:
        print(f"check-skips: FAIL: under CI=true {len(refused)} skip(s) have no allowed reason "
              "(fix the machine or the test; a reason joins tests/allowed-skips.txt only after "
              "review)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
