#!/usr/bin/env bash
# The headline table (the quick group: 300 s wall on a quiet 2-core machine with SEEDS=8): the builder's
# default rule against uniform subsampling at α 0.2, paired per seed, on MovieLens 100K (lr, fm,
# mlp) and the generated preference-exposure log (fm), in both modes (random split: rates
# computed on the training part; deployed: a snapshot of the earlier period rates the later one).
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

BASE=(--methods=uniform,"$DEFAULT_METHOD" "${DEFAULT_RULE[@]}" --alphas=0.2 --include_full=false
      --pilot=none)
sets=()
if [[ -n "$ML" ]]; then
  for mode in random deployed; do
    gs_eval "ml-$mode" --movielens="$ML" --models=lr,fm,mlp --mode="$mode" "${BASE[@]}"
    sets+=("MovieLens 100K, $mode=$WORK/ml-$mode.json")
  done
else
  gs_no_movielens "$OUT/movielens.md"
fi
gs_gen pref-0.1.csv --preset=kuairec --scale=0.1 --seed=7 --exposure=preference
for mode in random deployed; do
  gs_eval "gp-$mode" --log="$WORK/pref-0.1.csv" --models=fm --mode="$mode" "${BASE[@]}"
  sets+=("preference log 0.1, $mode=$WORK/gp-$mode.json")
done
gs_tables headline --out "$OUT/headline.md" "${sets[@]}"
