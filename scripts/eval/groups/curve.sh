#!/usr/bin/env bash
# AUC vs α (0.05, 0.1, 0.2, 0.3, 0.5 and 1 = the unsampled model) for uniform, the default rule
# and the near-oracle pilot rule, and the budget saved at equal AUC: the α uniform needs to match
# the default at α 0.2, with a 95 % interval (scripts/eval/tables.py "budget").
# Sets (CURVE_SETS, default all; measured CPU time per set on 2 shared cores at SEEDS=8 in
# docs/EVALUATION.md "Reproduce and runtime"):
#   ml-fm-random ml-fm-deployed ml-mlp-random ml-mlp-deployed gp1-fm-random gp1-fm-deployed
# With KEEP=1 (scripts/eval-report.sh), the sets not in CURVE_SETS keep their results from the
# previous run ($PREVIOUS): their commands and RUN.txt lines are carried over, and RUN.txt says so.
# KEEP=1 CURVE_SETS=none runs no set and rebuilds the tables from the kept results.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

ALL_SETS="ml-fm-random ml-fm-deployed ml-mlp-random ml-mlp-deployed gp1-fm-random gp1-fm-deployed"
CURVE_SETS="${CURVE_SETS:-$ALL_SETS}"
GRID=(--methods=uniform,"$DEFAULT_METHOD",opt-mix "${DEFAULT_RULE[@]}" "${NEAR_ORACLE[@]}"
      --alphas=0.05,0.1,0.2,0.3,0.5 --include_full=true)
declare -A entry  # set -> "title=results JSON"
pids=()
for set in $CURVE_SETS; do
  [[ "$set" == none ]] && continue
  IFS=- read -r data model mode <<< "$set"
  case "$data" in
    ml)
      if [[ -z "$ML" ]]; then gs_no_movielens "$OUT/movielens.md"; continue; fi
      input=(--movielens="$ML")
      title="MovieLens 100K, $mode" ;;
    gp1)
      gs_gen pref-1.csv --preset=kuairec --scale=1 --seed=7 --exposure=preference
      input=(--log="$WORK/pref-1.csv")
      title="preference log 1, $mode" ;;
    *) echo "curve: unknown set '$set'" >&2; exit 2 ;;
  esac
  # Up to JOBS sets at once; the commands are recorded here, in set order.
  while (( $(jobs -rp | wc -l) >= JOBS )); do wait -n || true; done
  gs_eval_cmd "$set" "${input[@]}" --models="$model" --mode="$mode" "${GRID[@]}"
  gs_show "${GS_CMD[@]}" >> "$OUT/commands.txt"
  GS_RECORDED=1 gs_eval "$set" "${input[@]}" --models="$model" --mode="$mode" "${GRID[@]}" &
  pids+=($!)
  entry[$set]="$title=$WORK/$set.json"
done
for pid in "${pids[@]}"; do wait "$pid"; done  # each set's status (a failed one fails the group)
kept=()
if [[ -n "${PREVIOUS:-}" ]]; then
  for set in $ALL_SETS; do
    [[ " $CURVE_SETS " == *" $set "* ]] && continue
    gs_keep "$set" || continue
    IFS=- read -r data model mode <<< "$set"
    case "$data" in
      ml) title="MovieLens 100K, $mode" ;;
      gp1) title="preference log 1, $mode" ;;
    esac
    kept+=("$set")
    entry[$set]="$title=$OUT/$set.json"
  done
  gs_keep_note "${kept[@]}"
fi
sets=()  # in the order of ALL_SETS, whichever ran
for set in $ALL_SETS; do if [[ -n "${entry[$set]:-}" ]]; then sets+=("${entry[$set]}"); fi; done
if (( ${#sets[@]} > 0 )); then
  gs_tables curve --md "$OUT/curve.md" --svg "$OUT/curve.svg" --csv "$OUT/curve.csv" \
    --summary "$OUT/budget.md" "${sets[@]}"
fi
