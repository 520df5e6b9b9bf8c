#!/usr/bin/env python3
"""Recovery table of graphsieve-eval JSON outputs (one or more files, one row each).

For every (model, candidate configuration) of a file: mean AUC of full, uniform
and the candidate over the seeds they share, the paired differences
candidate - uniform and full - uniform with their standard errors, and the
recovery (AUC_c - AUC_u) / (AUC_full - AUC_u) with a delta-method standard
error from the per-seed paired differences, on rows where full beats
uniform by more than two standard errors. Deterministic output (no timings).
Usage: recovery.py ROW_LABEL=FILE.json [...] > table.md
"""
import json
import math
import sys


def key(run):
    return (run["method"], run["alpha"], run["floor"], run["gamma"], run["kappa"], run["pilot_kappa"])


def mean_se(xs):
    n = len(xs)
    m = sum(xs) / n
    if n < 2:
        return m, float("nan")
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    return m, math.sqrt(var / n)


def label(k):
    method, alpha, floor, gamma, kappa, pk = k
    parts = [method, f"α={alpha:g}"]
    if floor:
        parts.append(f"ϱ={floor:g}")
    if kappa:
        parts.append(f"κ={kappa:g}" + (f"/{pk:g}" if pk and pk != kappa else ""))
    if gamma:
        parts.append(f"γ={gamma:g}")
    return " ".join(parts)


def rows(row_label, path):
    data = json.load(open(path))
    test = data.get("data", {}).get("test_source", "")
    by = {}
    for r in data["runs"]:
        by.setdefault(r["model"], {}).setdefault(key(r), {})[r["seed"]] = r["auc"]
    out = []
    for model in sorted(by):
        cells = by[model]
        full = next((v for k, v in cells.items() if k[0] == "full"), None)
        for k in sorted(cells):
            if k[0] in ("full", "uniform"):
                continue
            uni = next((v for kk, v in cells.items() if kk[0] == "uniform" and kk[1] == k[1]), None)
            if full is None or uni is None:
                continue
            seeds = sorted(set(full) & set(uni) & set(cells[k]))
            if not seeds:
                continue
            dc = [cells[k][s] - uni[s] for s in seeds]
            df = [full[s] - uni[s] for s in seeds]
            mc, sc = mean_se(dc)
            mf, sf = mean_se(df)
            if mf > 2 * sf:
                rec = mc / mf
                # delta method on the ratio of two paired means
                n = len(seeds)
                cov = (sum((a - mc) * (b - mf) for a, b in zip(dc, df)) / (n - 1) / n) if n > 1 else 0.0
                var = (sc ** 2 - 2 * rec * cov + rec ** 2 * sf ** 2) / mf ** 2 if n > 1 else float("nan")
                rec_text = f"{100 * rec:+.0f}% ± {100 * math.sqrt(max(var, 0.0)):.0f}%"
            else:
                rec_text = "– (full − uniform not > 2 SE)"
            out.append(f"| {row_label} | {model} | {label(k)} | {len(seeds)} | "
                       f"{mean_se([full[s] for s in seeds])[0]:.4f} | {mean_se([uni[s] for s in seeds])[0]:.4f} | "
                       f"{mean_se([cells[k][s] for s in seeds])[0]:.4f} | {mf:+.4f} ± {sf:.4f} | "
                       f"{mc:+.4f} ± {sc:.4f} | {rec_text} |")
    return out


def main():
    print("| row | model | candidate | seeds | AUC full | AUC uniform | AUC candidate | "
          "full − uniform | candidate − uniform | recovery |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for arg in sys.argv[1:]:
        row_label, path = arg.split("=", 1)
        for line in rows(row_label, path):
            print(line)


if __name__ == "__main__":
    main()
