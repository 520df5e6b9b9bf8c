#!/usr/bin/env python3
"""Corruption trials of scripts/fault-campaign.sh (section "corruption").

For every file of a good snapshot version: byte flips at random offsets and
truncations. Each trial is a copy of the version under a new version id
(MANIFEST.json "version" rewritten, then the file mutated), checked twice:
  offline  `graphsieve canary --baseline-snapshot DIR ...` (the verified reader)
           must fail with a message naming the mutated file;
  server   CURRENT names the trial; the running server must record a failed
           refresh of it naming the file and keep serving the good version.
A mutated MANIFEST.json may stay valid JSON with different values: such a
trial is counted separately as "accepted" (the manifest has no checksum of
its own) and reported, not hidden.
"""
import argparse
import datetime
import json
import os
import random
import shutil
import subprocess
import sys
import time


def status(cli, port):
    # Retried: on a loaded machine one status call may miss its deadline.
    for _ in range(5):
        out = subprocess.run([cli, "status", "--server", f"127.0.0.1:{port}", "--json"],
                             capture_output=True, text=True, timeout=60)
        if out.returncode == 0:
            return json.loads(out.stdout)
        print(f"status call failed: {out.stderr.strip()}", file=sys.stderr)
        time.sleep(0.5)
    return {}


def write_current(root, version):
    tmp = os.path.join(root, "CURRENT.tmp")
    with open(tmp, "w") as f:
        f.write(version + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, os.path.join(root, "CURRENT"))


def mutations(size, flips, rng):
    out = []
    if size > 0:
        for _ in range(flips):
            out.append(("flip", rng.randrange(size), rng.randrange(1, 256)))
        out.append(("truncate", size // 2, 0))
        out.append(("truncate", 0, 0))
    return out


def apply(path, mutation):
    kind, offset, mask = mutation
    if kind == "flip":
        with open(path, "r+b") as f:
            f.seek(offset)
            b = f.read(1)[0]
            f.seek(offset)
            f.write(bytes([b ^ mask]))
    else:
        os.truncate(path, offset)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--template", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--good", required=True)
    ap.add_argument("--port", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--server-log", required=True)
    ap.add_argument("--flips-per-file", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20261126)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    files = sorted(os.path.relpath(os.path.join(d, f), a.template)
                   for d, _, fs in os.walk(a.template) for f in fs)
    base = datetime.datetime(2099, 1, 1)
    stats = {"trials": 0, "offline_rejected_named": 0, "offline_rejected_unnamed": 0,
             "offline_accepted": 0, "server_rejected_named": 0, "server_rejected_unnamed": 0,
             "server_adopted": 0, "server_no_event": 0, "old_version_kept": 0, "empty_files": 0}
    per_file = {}
    reasons = {}
    failures = []
    k = 0
    for rel in files:
        size = os.path.getsize(os.path.join(a.template, rel))
        muts = mutations(size, a.flips_per_file, rng)
        if not muts:
            stats["empty_files"] += 1
            per_file[rel] = "empty (nothing to flip or truncate)"
            continue
        rejected = 0
        for m in muts:
            k += 1
            stats["trials"] += 1
            version = (base + datetime.timedelta(seconds=k)).strftime("%Y%m%dT%H%M%SZ") + f"-{k:08x}"
            d = os.path.join(a.root, version)
            shutil.copytree(a.template, d)
            mpath = os.path.join(d, "MANIFEST.json")
            with open(mpath) as f:
                manifest = json.load(f)
            manifest["version"] = version
            with open(mpath, "w") as f:
                json.dump(manifest, f, indent=2)
            apply(os.path.join(d, rel), m)
            name = os.path.basename(rel)
            off = subprocess.run([a.cli, "canary", "--baseline-snapshot", d, "--candidate-snapshot", d,
                                  "--max-mean-delta", "-1", "--max-p99-delta", "-1", "--max-ks", "-1",
                                  "--max-fraction-over", "-1"], capture_output=True, text=True,
                                 timeout=120)
            if off.returncode == 0:
                stats["offline_accepted"] += 1
                failures.append(f"offline accepted {rel} {m}")
            elif name in off.stderr:
                stats["offline_rejected_named"] += 1
                rejected += 1
                reason = off.stderr.strip().splitlines()[-1]
                reasons.setdefault(rel, reason[:300])
            else:
                stats["offline_rejected_unnamed"] += 1
                failures.append(f"offline rejected {rel} {m} without naming it: {off.stderr.strip()[:300]}")
            # The server: CURRENT names the trial version.
            write_current(a.root, version)
            event = None
            deadline = time.time() + 20
            while time.time() < deadline and event is None:
                st = status(a.cli, a.port)
                for e in st.get("refresh_history", []):
                    if e.get("version") == version:
                        event = e
                if event is None:
                    time.sleep(0.1)
            st = status(a.cli, a.port)
            serving = st.get("active", {}).get("version", "")
            if event is None:
                stats["server_no_event"] += 1
                failures.append(f"server never tried {version} ({rel} {m})")
            elif event.get("ok"):
                stats["server_adopted"] += 1
                failures.append(f"server adopted {rel} {m}")
            elif name in event.get("message", ""):
                stats["server_rejected_named"] += 1
            else:
                stats["server_rejected_unnamed"] += 1
                failures.append(f"server rejected {rel} {m} without naming it: {event.get('message')}")
            if serving == a.good:
                stats["old_version_kept"] += 1
            elif event is not None and event.get("ok"):
                # it adopted the mutated copy: put the good version back.
                subprocess.run([a.cli, "pin", "--server", f"127.0.0.1:{a.port}", "--version", a.good],
                               capture_output=True, timeout=30)
                subprocess.run([a.cli, "pin", "--server", f"127.0.0.1:{a.port}", "--unpin"],
                               capture_output=True, timeout=30)
            else:
                failures.append(f"server serves {serving!r}, not the good version, after {rel} {m}")
            write_current(a.root, a.good)
            shutil.rmtree(d)
        per_file[rel] = f"{rejected}/{len(muts)} rejected offline naming the file"
    print("RESULT corruption: " + ", ".join(f"{key}={v}" for key, v in stats.items()))
    for rel in files:
        print(f"RESULT corruption:   {rel}: {per_file.get(rel)}")
    for rel, reason in sorted(reasons.items()):
        print(f"RESULT corruption:   reason for {rel}: {reason}")
    for f in failures:
        print(f"FAILED corruption: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
