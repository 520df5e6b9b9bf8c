#!/usr/bin/env python3
"""Tables and figures of docs/EVALUATION.md from graphsieve-eval's JSON output.

  tables.py scrub IN.json OUT.json [--replace OLD=NEW ...]
      the runs and summaries without timings, the command without local paths
  tables.py headline --out FILE.md LABEL=RUN.json ...
      per data set / mode and model: uniform and the default at α 0.2, the paired ΔAUC ± SE
  tables.py stitch REPORT.md DOCS_EVAL_DIR
      copies docs/eval/<group>/<file>.md between the report's GENERATED markers
  tables.py curve --md FILE.md --svg FILE.svg --csv FILE.csv [--summary FILE.md] LABEL=RUN.json ...
      AUC vs α for uniform, the default and the near-oracle pilot rule, and the budget saved
      at equal AUC: the α uniform needs to match the default at α 0.2, with an interval

Everything written is a pure function of the inputs (fixed formats, input order), so the same
runs give the same bytes. Standard library only.
"""
import argparse
import csv as csv_module
import json
import math
import sys

DEFAULT = "maec-prop-mix"
ORACLE = "opt-mix"
NAMES = {"uniform": "uniform", DEFAULT: "default", ORACLE: "near-oracle pilot"}
# Two-sided 95 % Student-t quantiles by degrees of freedom (1.96 beyond 30), as graphsieve-eval
# verdict uses (eval/verdict.cc StudentT975).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060,
        2.056, 2.052, 2.048, 2.045, 2.042]


def t975(n):
    """The 95 % half-width factor for a mean over n paired seeds."""
    return T975[n - 2] if 2 <= n <= 31 else (1.96 if n > 31 else float("nan"))


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def labelled(args):
    out = []
    for a in args:
        if "=" not in a:
            sys.exit(f"tables.py: '{a}' is not LABEL=FILE.json")
        label, path = a.split("=", 1)
        out.append((label, load(path)))
    return out


def mean(v):
    return sum(v) / len(v)


def se(v):
    n = len(v)
    if n < 2:
        return float("nan")
    m = mean(v)
    return math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1) / n)


def pm(v, digits=4, signed=True):
    s = f"{mean(v):+.{digits}f}" if signed else f"{mean(v):.{digits}f}"
    return f"{s} ± {se(v):.{digits}f}"


def by_seed(runs, model, method, alpha=None):
    """seed -> AUC of one cell; the unsampled model (`full`) answers for every method at α 1."""
    out = {}
    for r in runs:
        if r["model"] != model:
            continue
        if alpha is not None and alpha >= 1.0:
            if r["method"] == "full":
                out[r["seed"]] = r["auc"]
        elif r["method"] == method and (alpha is None or abs(r["alpha"] - alpha) < 1e-9):
            out[r["seed"]] = r["auc"]
    return out


def paired(a, b):
    seeds = sorted(set(a) & set(b))
    return [a[s] - b[s] for s in seeds]


def models_of(runs):
    seen = []
    for r in runs:
        if r["model"] not in seen:
            seen.append(r["model"])
    return seen


def cmd_scrub(ns):
    j = load(ns.input)
    j.pop("seconds", None)
    for r in j.get("runs", []):
        r.pop("rate_seconds", None)
        r.pop("train_seconds", None)
    cmd, title = j.get("command", ""), j.get("title", "")
    for rep in ns.replace or []:
        old, new = rep.split("=", 1)
        if old:
            cmd, title = cmd.replace(old, new), title.replace(old, new)
    j["title"] = title
    # Paths of the scratch outputs say nothing about the result.
    cmd = " ".join(w for w in cmd.split() if not w.startswith(("--output_md=", "--output_json=",
                                                                "--work_dir=")))
    j["command"] = cmd
    with open(ns.output, "w", encoding="utf-8") as f:
        json.dump(j, f, indent=1, ensure_ascii=False)
        f.write("\n")


def cmd_headline(ns):
    lines = [
        "| data, mode | model | seeds | uniform AUC | default AUC | ΔAUC default − uniform ± SE | "
        "95 % interval | kept neg. (default) | rated EXACT / INFERRED / DEFAULT (deployed) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, j in labelled(ns.inputs):
        for model in models_of(j["runs"]):
            u = by_seed(j["runs"], model, "uniform", 0.2)
            d = by_seed(j["runs"], model, DEFAULT, 0.2)
            diff = paired(d, u)
            if not diff:
                continue
            kept = [r["kept_negative_fraction"] for r in j["runs"]
                    if r["model"] == model and r["method"] == DEFAULT and abs(r["alpha"] - 0.2) < 1e-9]
            lo, hi = mean(diff) - t975(len(diff)) * se(diff), mean(diff) + t975(len(diff)) * se(diff)
            src = [r for r in j["runs"] if r["model"] == model and r["method"] == DEFAULT
                   and r.get("source_exact", -1) >= 0]
            sources = "–" if not src else " / ".join(
                f"{mean([r[k] for r in src]):.3f}"
                for k in ("source_exact", "source_inferred", "source_default"))
            lines.append(
                f"| {label} | {model} | {len(diff)} | {mean(list(u.values())):.4f} | "
                f"{mean(list(d.values())):.4f} | **{pm(diff)}** | {lo:+.4f} … {hi:+.4f} | "
                f"{mean(kept):.3f} | {sources} |")
    with open(ns.out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def crossing(alphas, values):
    """First α (log-linear interpolation) where values rises through 0, scanning up; None if
    never; alphas[0] when it is already >= 0 at the smallest α."""
    if values[0] >= 0:
        return alphas[0]
    for i in range(1, len(alphas)):
        if values[i] >= 0:
            a0, a1 = math.log(alphas[i - 1]), math.log(alphas[i])
            t = -values[i - 1] / (values[i] - values[i - 1])
            return math.exp(a0 + t * (a1 - a0))
    return None


def budget(runs, model, method, grid):
    """The α uniform needs to match `method` at α 0.2: paired per seed, D(α) = uniform(α) −
    method(0.2); the point where mean D crosses 0, and the interval where its 95 % band does."""
    target = by_seed(runs, model, method, 0.2)
    alphas, m, lo, hi = [], [], [], []
    for a in grid:
        d = paired(by_seed(runs, model, "uniform", a), target)
        if len(d) < 2:
            continue
        alphas.append(a)
        m.append(mean(d))
        lo.append(mean(d) - t975(len(d)) * se(d))
        hi.append(mean(d) + t975(len(d)) * se(d))
    if not alphas:
        return None
    # The upper bound of D crosses first (smallest α), then the mean, then the lower bound.
    return {"alpha": crossing(alphas, m), "low": crossing(alphas, hi), "high": crossing(alphas, lo),
            "max_alpha": alphas[-1], "min_alpha": alphas[0]}


def fmt_alpha(a, b):
    if a is None:
        return f"> {b['max_alpha']:g}"
    if a <= b["min_alpha"]:
        return f"≤ {b['min_alpha']:g}"
    return f"{a:.3f}"


def fmt_saved(a, b):
    """Share of uniform's kept negatives the rule does without; below α 0.2 uniform needs fewer
    negatives than the rule (no saving)."""
    if a is not None and a < 0.2 - 1e-12:
        return "< 0%"
    if a is None:
        return f"> {1 - 0.2 / b['max_alpha']:.0%}"
    if a <= b["min_alpha"]:
        return f"≤ {1 - 0.2 / b['min_alpha']:.0%}"
    return f"{1 - 0.2 / a:.0%}"


def curve_grid(runs):
    grid = sorted({r["alpha"] for r in runs if r["method"] != "full"})
    if any(r["method"] == "full" for r in runs):
        grid.append(1.0)
    return grid


def cmd_curve(ns):
    sets = labelled(ns.inputs)
    md, csv = [], [["set", "model", "method", "alpha", "seeds", "auc_mean", "auc_se",
                    "delta_vs_uniform", "delta_se"]]
    budgets = [
        "| data, mode | model | rule at α 0.2 | ΔAUC vs uniform at α 0.2 ± SE | uniform's α to match "
        "(95 % interval) | negatives saved vs uniform (interval) |",
        "|---|---|---|---|---|---|"]
    panels = []
    for label, j in sets:
        runs = j["runs"]
        grid = curve_grid(runs)
        for model in models_of(runs):
            methods = [m for m in ("uniform", DEFAULT, ORACLE)
                       if any(r["method"] == m and r["model"] == model for r in runs)]
            md.append(f"#### {label}, {model}\n")
            md.append("| α | " + " | ".join(
                f"{NAMES[m]} AUC" + ("" if m == "uniform" else f" | {NAMES[m]} − uniform ± SE")
                for m in methods) + " |")
            md.append("|---|" + "---|" * (2 * len(methods) - 1))
            series = {m: [] for m in methods}
            for a in grid:
                u = by_seed(runs, model, "uniform", a)
                cells = []
                for m in methods:
                    v = by_seed(runs, model, m, a)
                    if not v:
                        cells.append("–" if m == "uniform" else "– | –")
                        continue
                    auc = list(v.values())
                    d = paired(v, u)
                    half = t975(len(d)) * se(d) if m != "uniform" and len(d) > 1 else 0.0
                    series[m].append((a, mean(auc), se(auc), mean(d) if m != "uniform" else 0.0,
                                      half))
                    cell = f"{mean(auc):.4f}"
                    if m != "uniform":
                        cell += " | " + ("same model (unsampled)" if a >= 1.0 else pm(d))
                    cells.append(cell)
                    csv.append([label, model, m, f"{a:g}", str(len(auc)), f"{mean(auc):.6f}",
                                f"{se(auc):.6f}", f"{mean(d) if m != 'uniform' else 0.0:.6f}",
                                f"{se(d) if m != 'uniform' and len(d) > 1 else 0.0:.6f}"])
                md.append(f"| {'1 (full)' if a >= 1.0 else f'{a:g}'} | " + " | ".join(cells) + " |")
            md.append("")
            for m in methods:
                if m == "uniform":
                    continue
                b = budget(runs, model, m, grid)
                d = paired(by_seed(runs, model, m, 0.2), by_seed(runs, model, "uniform", 0.2))
                if b is None or len(d) < 2:
                    continue
                budgets.append(
                    f"| {label} | {model} | {NAMES[m]} | {pm(d)} | **{fmt_alpha(b['alpha'], b)}** "
                    f"({fmt_alpha(b['low'], b)} … {fmt_alpha(b['high'], b)}) | "
                    f"**{fmt_saved(b['alpha'], b)}** ({fmt_saved(b['low'], b)} … "
                    f"{fmt_saved(b['high'], b)}) |")
            panels.append((f"{label}, {model}", series))
    with open(ns.md, "w", encoding="utf-8") as f:
        f.write("\n".join(budgets) + "\n\n" + "\n".join(md))
    if ns.summary:  # the budget table alone (the report's page shows it; curve.md has the α rows)
        with open(ns.summary, "w", encoding="utf-8") as f:
            f.write("\n".join(budgets) + "\n")
    with open(ns.csv, "w", encoding="utf-8", newline="") as f:
        csv_module.writer(f, lineterminator="\n").writerows(csv)
    with open(ns.svg, "w", encoding="utf-8") as f:
        f.write(svg(panels))


COLOURS = {"uniform": "#555555", DEFAULT: "#1f6fb4", ORACLE: "#d9822b"}


def svg(panels):
    """Per panel two plots: AUC vs α (log scale) and ΔAUC vs uniform with its 95 % interval."""
    w, h, pad = 380, 220, 46
    rows = len(panels)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * w + 20}" '
           f'height="{rows * (h + 30) + 40}" font-family="sans-serif" font-size="11">',
           '<rect width="100%" height="100%" fill="white"/>']
    lx = 10
    for m, name in NAMES.items():
        out.append(f'<line x1="{lx}" y1="14" x2="{lx + 18}" y2="14" stroke="{COLOURS[m]}" '
                   f'stroke-width="2"/><text x="{lx + 22}" y="18">{name}</text>')
        lx += 40 + 7 * len(name)
    for i, (title, series) in enumerate(panels):
        y0 = 40 + i * (h + 30)
        for k, kind in enumerate(("AUC", "ΔAUC vs uniform (95 %)")):
            x0 = 10 + k * (w + 10)
            pts = [(p[0], p[1] if k == 0 else p[3], 0.0 if k == 0 else p[4])
                   for m in series for p in series[m] if k == 0 or m != "uniform"]
            if not pts:
                continue
            xs = [p[0] for p in pts]
            lo = min(p[1] - p[2] for p in pts + ([(1, 0, 0)] if k else []))
            hi = max(p[1] + p[2] for p in pts + ([(1, 0, 0)] if k else []))
            if hi - lo < 1e-9:
                hi, lo = hi + 1e-3, lo - 1e-3
            margin = 0.08 * (hi - lo)
            lo, hi = lo - margin, hi + margin
            lx0, lx1 = math.log(min(xs)), math.log(max(xs))

            def px(a):
                return x0 + pad + (math.log(a) - lx0) / max(lx1 - lx0, 1e-9) * (w - pad - 10)

            def py(v):
                return y0 + 20 + (hi - v) / (hi - lo) * (h - 50)

            out.append(f'<text x="{x0 + 4}" y="{y0 + 12}" font-weight="bold">'
                       f'{title}: {kind}</text>')
            out.append(f'<rect x="{x0 + pad}" y="{y0 + 20}" width="{w - pad - 10}" '
                       f'height="{h - 50}" fill="none" stroke="#999"/>')
            for t in sorted(set(xs)):
                out.append(f'<text x="{px(t):.1f}" y="{y0 + h - 16}" text-anchor="middle">'
                           f'{t:g}</text>')
            out.append(f'<text x="{x0 + pad + (w - pad) / 2:.1f}" y="{y0 + h - 3}" '
                       f'text-anchor="middle">α (kept share of negatives, log scale)</text>')
            for v in (lo + margin, (lo + hi) / 2, hi - margin):
                out.append(f'<text x="{x0 + pad - 3}" y="{py(v) + 4:.1f}" text-anchor="end">'
                           f'{v:.4f}</text>')
            if k == 1 and lo < 0 < hi:
                out.append(f'<line x1="{x0 + pad}" y1="{py(0):.1f}" x2="{x0 + w - 10}" '
                           f'y2="{py(0):.1f}" stroke="#999" stroke-dasharray="3,3"/>')
            for m, ps in series.items():
                if k == 1 and m == "uniform":
                    continue
                vals = [(p[0], p[1] if k == 0 else p[3], 0.0 if k == 0 else p[4]) for p in ps]
                path = " ".join(f"{px(a):.1f},{py(v):.1f}" for a, v, _ in vals)
                out.append(f'<polyline points="{path}" fill="none" stroke="{COLOURS[m]}" '
                           f'stroke-width="2"/>')
                for a, v, e in vals:
                    out.append(f'<circle cx="{px(a):.1f}" cy="{py(v):.1f}" r="2.5" '
                               f'fill="{COLOURS[m]}"/>')
                    if e > 0:
                        out.append(f'<line x1="{px(a):.1f}" y1="{py(v - e):.1f}" x2="{px(a):.1f}" '
                                   f'y2="{py(v + e):.1f}" stroke="{COLOURS[m]}"/>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def cmd_stitch(ns):
    """Copies each generated file between its markers in the report:
    <!-- BEGIN GENERATED: group/file.md --> ... <!-- END GENERATED: group/file.md -->"""
    import pathlib
    import re
    report, root = pathlib.Path(ns.report), pathlib.Path(ns.root)
    text = report.read_text(encoding="utf-8")
    for name in re.findall(r"<!-- BEGIN GENERATED: ([\w./-]+) -->", text):
        part = root / name
        if not part.exists():
            continue
        body = part.read_text(encoding="utf-8").strip()
        text = re.sub(rf"(<!-- BEGIN GENERATED: {re.escape(name)} -->\n).*?"
                      rf"(<!-- END GENERATED: {re.escape(name)} -->)",
                      lambda m: m.group(1) + body + "\n" + m.group(2), text, flags=re.S)
    report.write_text(text, encoding="utf-8")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("scrub")
    s.add_argument("input")
    s.add_argument("output")
    s.add_argument("--replace", action="append")
    s = sub.add_parser("headline")
    s.add_argument("--out", required=True)
    s.add_argument("inputs", nargs="+")
    s = sub.add_parser("curve")
    s.add_argument("--md", required=True)
    s.add_argument("--svg", required=True)
    s.add_argument("--csv", required=True)
    s.add_argument("--summary", help="also write the budget table alone to this file")
    s.add_argument("inputs", nargs="+")
    s = sub.add_parser("stitch")
    s.add_argument("report")
    s.add_argument("root")
    ns = p.parse_args()
    {"scrub": cmd_scrub, "headline": cmd_headline, "curve": cmd_curve, "stitch": cmd_stitch}[ns.cmd](ns)


if __name__ == "__main__":
    main()
