#!/usr/bin/env python3
"""Why a rate rule does or does not recover quality on a randomly exposed test.

Inputs: a generated log with the generator's truth (graphsieve-gen --truth: a true_prob column),
the builder's per-pair export of that log (graphsieve-build --export: user_id, item_id, label,
instances, geff, hardness, score, rate) and the randomly exposed test of the same generator run
(graphsieve-gen --test_output --test_exposure=random). Output (Markdown, deterministic for a
given --seed):
  1. the importance weights 1/π of the kept negatives (one Bernoulli draw of every negative
     instance at its rate): mean, p99, max, the share of the total weight held by the top 1% of
     kept negatives and the effective sample size (Σw)²/Σw² per kept negative (1 = uniform), for
     the exported rates, for the same scores under the mixture rule π = min(1, ρ(s/h̄ + κ)) at
     the other --kappas (ρ fitted so that the mean rate over negative instances is α) and for
     uniform;
  2. Spearman correlations over negative pairs of the rate with the item's and the user's
     exposure (instances in the log) and with the pair's true click probability;
  3. per item-exposure decile: the share of the log's instances and of the random test's
     impressions, the test's click rate, and the negatives' mean true probability and mean rate;
  4. the share of the random test's impressions whose pair the log holds.
Usage: mechanism.py --log=L.csv --rates=EXPORT.csv --test=T.csv [--alpha=0.2] [--kappas=0.3,1,3]
"""
import argparse

import numpy as np
import pandas as pd


def fit_mixture(s, w, alpha, kappa):
    """π = min(1, ρ(s/h̄ + κ)) with Σ w π = α Σ w (bisection on ρ; w = instances per pair)."""
    hbar = np.sum(w * s) / np.sum(w)
    a = s / hbar + kappa
    target = alpha * np.sum(w)
    lo, hi = 0.0, 1.0 / max(np.min(a), 1e-12)
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if np.sum(w * np.minimum(1.0, mid * a)) < target:
            lo = mid
        else:
            hi = mid
    return np.minimum(1.0, hi * a)


def weight_stats(rate, w, rng):
    """Importance weights 1/π of one Bernoulli(π) draw of every negative instance."""
    inst_rate = np.repeat(rate, w.astype(np.int64))
    kept = inst_rate[rng.random(inst_rate.size) < inst_rate]
    wt = np.sort(1.0 / kept)[::-1]
    top = max(1, wt.size // 100)
    return {
        "kept": wt.size,
        "mean": wt.mean(),
        "p99": np.quantile(wt, 0.99),
        "max": wt[0],
        "top1": wt[:top].sum() / wt.sum(),
        "ess": wt.sum() ** 2 / np.sum(wt**2) / wt.size,
    }


def rank(x):
    return pd.Series(np.asarray(x)).rank().to_numpy()


def corr(rx, ry):
    return float(np.corrcoef(rx, ry)[0, 1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--rates", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--alpha", type=float, default=0.2)
    ap.add_argument("--kappa_of_export", type=float, default=1.0)  # the builder's default κ
    ap.add_argument("--kappas", default="0.3,1,3")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    ids = {"user_id": np.int64, "item_id": np.int64}
    log = pd.read_csv(args.log, usecols=["user_id", "item_id", "true_prob"],
                      dtype={**ids, "true_prob": np.float64})
    truth = log.groupby(["user_id", "item_id"], sort=False)["true_prob"].first()
    item_exp = log.groupby("item_id").size()
    user_exp = log.groupby("user_id").size()
    rates = pd.read_csv(args.rates, usecols=["user_id", "item_id", "label", "instances", "score",
                                             "rate"],
                        dtype={**ids, "label": np.int8, "instances": np.int64,
                               "score": np.float64, "rate": np.float64})
    test = pd.read_csv(args.test, usecols=["user_id", "item_id", "label"], dtype=ids)

    neg = rates[rates["label"] == 0].reset_index(drop=True)
    neg = neg.join(truth, on=["user_id", "item_id"])
    w = neg["instances"].to_numpy(dtype=float)
    s = neg["score"].to_numpy()
    tp = neg["true_prob"].to_numpy()
    r_item = rank(neg["item_id"].map(item_exp))
    r_user = rank(neg["user_id"].map(user_exp))
    r_tp = rank(tp)

    rules = [(f"exported rates (mixture κ {args.kappa_of_export:g})",
              neg["rate"].to_numpy())]
    for k in [float(x) for x in args.kappas.split(",") if x]:
        rules.append((f"same scores, mixture κ {k:g}", fit_mixture(s, w, args.alpha, k)))
    rules.append(("uniform", np.full(len(neg), args.alpha)))
    max_dev = np.max(np.abs(fit_mixture(s, w, args.alpha, args.kappa_of_export) - rules[0][1]))

    print(f"Negative pairs {len(neg)}, negative instances {int(w.sum())}, α = {args.alpha:g}. "
          f"The mixture refit at κ {args.kappa_of_export:g} reproduces the exported rates to "
          f"{max_dev:.1e}.")
    print()
    print("**Importance weights 1/π of the kept negatives** (one Bernoulli draw per negative "
          f"instance, seed {args.seed}; ESS = (Σw)²/Σw² per kept negative, 1 = uniform), and the "
          "Spearman correlation over negative pairs of π with the item's exposure (its instances "
          "in the log), the user's exposure and the pair's true click probability:")
    print()
    print("| rule | kept | mean 1/π | p99 | max | weight share of the top 1% | ESS / kept | "
          "ρ(π, item exposure) | ρ(π, user exposure) | ρ(π, true prob.) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, r in rules:
        st = weight_stats(r, w, np.random.default_rng(args.seed))
        if name == "uniform":
            cs = ("–", "–", "–")
        else:
            rr = rank(r)
            cs = tuple(f"{corr(rr, x):+.3f}" for x in (r_item, r_user, r_tp))
        print(f"| {name} | {st['kept']} | {st['mean']:.2f} | {st['p99']:.2f} | {st['max']:.1f} | "
              f"{100 * st['top1']:.1f}% | {st['ess']:.3f} | {cs[0]} | {cs[1]} | {cs[2]} |")
    print()
    print("For reference (Spearman over negative pairs): the true click probability with the "
          f"item's exposure {corr(r_tp, r_item):+.3f}, with the user's exposure "
          f"{corr(r_tp, r_user):+.3f}; the MA-EC score (before the rate rule) with the true "
          f"probability {corr(rank(s), r_tp):+.3f}.")
    print()

    # Item-exposure deciles: items ranked by their instances in the log (ties by id).
    items = item_exp.sort_values(kind="stable").index.to_numpy()
    dec = pd.Series(np.arange(items.size) * 10 // items.size, index=items)
    log_share = log["item_id"].map(dec).value_counts(normalize=True).sort_index()
    t_dec = test["item_id"].map(dec)
    test_share = t_dec.value_counts(normalize=True).sort_index()
    test_pos = test.groupby(t_dec)["label"].mean()
    nd = neg["item_id"].map(dec).to_numpy()
    alt = rules[-2]
    print("**Item-exposure deciles** (items ranked by their instances in the log; decile 10 = "
          "the most shown tenth of the catalogue): the share of the log's instances and of the "
          "random test's impressions, the click rate of the test's impressions, and the "
          "negatives' instance-weighted mean true probability and mean rate:")
    print()
    print("| decile | log instances | random-test impressions | test click rate | "
          f"neg. true prob. | neg. rate (default) | neg. rate ({alt[0].split(', ')[-1]}) |")
    print("|---|---|---|---|---|---|---|")
    for d in range(10):
        m = nd == d
        ww = w[m]
        print(f"| {d + 1} | {100 * log_share.get(d, 0):.1f}% | {100 * test_share.get(d, 0):.1f}% | "
              f"{test_pos.get(d, float('nan')):.4f} | {np.sum(ww * tp[m]) / ww.sum():.4f} | "
              f"{np.sum(ww * rules[0][1][m]) / ww.sum():.3f} | "
              f"{np.sum(ww * alt[1][m]) / ww.sum():.3f} |")
    print()

    known = test["item_id"].isin(item_exp.index) & test["user_id"].isin(user_exp.index)
    held = test[known].merge(rates[["user_id", "item_id"]], on=["user_id", "item_id"],
                             how="left", indicator=True)["_merge"].eq("both").mean()
    print(f"The random test: {int(known.sum())} of {len(test)} impressions have a user and an "
          f"item the log shows; the log holds the pair of {100 * held:.2f}% of them (a snapshot "
          "of the whole log would answer those EXACT, the rest INFERRED from the nodes).")


if __name__ == "__main__":
    main()
