#!/usr/bin/env python3
"""Worst-row selection table of graphsieve-eval JSON outputs.

Usage: selection.py ROW_LABEL=FILE.json[,FILE.json...] [...] > table.md

A row is one (input, mode, test) label and one target model of its files; the
files of a label are merged (their runs are keyed by method, rate settings,
model and seed; the same seed gives the same split and the same uniform run,
so candidates from different files of a label are paired with the same
uniform). For every candidate (method and rate settings): per row, the gain
over uniform (mean of the per-seed paired differences ± standard error), the
recovery (gain / (full − uniform), delta-method SE) where full beats uniform
by more than two standard errors, and the worst row (the lowest mean gain).
Uniform itself is a candidate (gain 0 on every row). The last column counts
the rows where the candidate is below uniform by more than one standard error.
This table does not choose: the decision is `graphsieve-eval select`'s
(eval/selection.h, non-inferiority then saving), which the group appends.
Deterministic output (no timings).
"""
import json
import math
import sys

from recovery import key, mean_se  # the run key and the paired mean ± SE, as in recovery tables


def label(k):
    method, alpha, floor, gamma, kappa, pk = k
    parts = [method]
    if floor:
        parts.append(f"ϱ={floor:g}")
    if kappa:
        parts.append(f"κ={kappa:g}" + (f"/{pk:g}" if pk and pk != kappa else ""))
    if gamma or "prop" in method:
        parts.append(f"γ={gamma:g}")
    return " ".join(parts)


def load(row_label, paths):
    """{model: {key: {seed: auc}}}, the tests' descriptions."""
    by, tests = {}, set()
    for path in paths:
        try:
            data = json.load(open(path))
        except (OSError, ValueError):
            continue
        tests.add(data.get("data", {}).get("test_source", ""))
        for r in data["runs"]:
            by.setdefault(r["model"], {}).setdefault(key(r), {})[r["seed"]] = r["auc"]
    return by, tests


def main():
    rows = []  # (row label, cells)
    notes = []
    for arg in sys.argv[1:]:
        row_label, files = arg.split("=", 1)
        by, tests = load(row_label, [f for f in files.split(",") if f])
        if not by:
            notes.append(f"- {row_label}: not run (no results).")
        for model in sorted(by):
            rows.append((f"{row_label}, {model}", by[model]))
    alpha = 0.2
    cand = {}  # key -> {row: (gain, se, rec_text, n)}
    full_rows = []
    for name, cells in rows:
        full = next((v for k, v in cells.items() if k[0] == "full"), None)
        uni = next((v for k, v in cells.items() if k[0] == "uniform"), None)
        if full is None or uni is None:
            notes.append(f"- {name}: no full or uniform run.")
            continue
        seeds = sorted(set(full) & set(uni))
        df = [full[s] - uni[s] for s in seeds]
        mf, sf = mean_se(df)
        full_rows.append((name, len(seeds), mean_se([full[s] for s in seeds])[0],
                          mean_se([uni[s] for s in seeds])[0], mf, sf))
        for k in cells:
            if k[0] == "full":
                continue
            alpha = k[1] if k[0] != "full" else alpha
            ks = sorted(set(seeds) & set(cells[k]))
            if not ks:
                continue
            dc = [cells[k][s] - uni[s] for s in ks]
            dff = [full[s] - uni[s] for s in ks]
            mc, sc = mean_se(dc)
            mf2, sf2 = mean_se(dff)
            rec = ""
            if k[0] != "uniform" and len(ks) > 1 and mf2 > 2 * sf2:
                r = mc / mf2
                n = len(ks)
                cov = sum((a - mc) * (b - mf2) for a, b in zip(dc, dff)) / (n - 1) / n
                var = (sc ** 2 - 2 * r * cov + r ** 2 * sf2 ** 2) / mf2 ** 2
                rec = f" ({100 * r:+.0f}% ± {100 * math.sqrt(max(var, 0.0)):.0f}%)"
            ukey = ("uniform",) + k[1:] if k[0] == "uniform" else k
            cand.setdefault(ukey, {})[name] = (mc, sc, rec, len(ks))
    names = [r[0] for r in full_rows]
    print("Rows (full − uniform is the gap a sampler can recover; recovery is reported where it is "
          "larger than two standard errors):")
    print()
    print("| row | seeds | AUC full | AUC uniform | full − uniform |")
    print("|---|---|---|---|---|")
    for name, n, af, au, mf, sf in full_rows:
        print(f"| {name} | {n} | {af:.4f} | {au:.4f} | {mf:+.4f} ± {sf:.4f} |")
    print()
    print("Gain over uniform per candidate and row (mean of the paired per-seed differences ± "
          "standard error; recovery in brackets), and the worst row:")
    print()
    print("| candidate | " + " | ".join(names) + " | worst row | rows below uniform by > 1 SE |")
    print("|---" * (len(names) + 3) + "|")
    ranked = []
    for k in sorted(cand, key=lambda k: (k[0] != "uniform", label(k))):
        cells = cand[k]
        out = []
        for name in names:
            if name in cells:
                mc, sc, rec, n = cells[name]
                out.append("0 (reference)" if k[0] == "uniform" else f"{mc:+.4f} ± {sc:.4f}{rec}")
            else:
                out.append("not run")
        measured = [(cells[n][0], n) for n in names if n in cells]
        worst = min(measured) if measured else None
        complete = len(measured) == len(names)
        wtext = (f"{worst[0]:+.4f} ({worst[1]})" if worst else "–") + ("" if complete else
                 f"; {len(measured)} of {len(names)} rows")
        below = sum(1 for n in names if n in cells and cells[n][0] < -cells[n][1])
        if complete:
            ranked.append((worst[0], label(k)))
        print(f"| {label(k)} | " + " | ".join(out) + f" | {wtext} | {below} of {len(measured)} |")
    print()
    if notes:
        print()
        print("\n".join(notes))


if __name__ == "__main__":
    main()
