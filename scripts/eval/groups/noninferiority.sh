#!/usr/bin/env bash
# Group "noninferiority": the limit (the oracle from the generator's truth and its predicted
# recovery R*), the candidate rules and the selection by non-inferiority, then saving, at α 0.2
# (docs/EVALUATION.md "Selection by non-inferiority, then saving"; the decision is made by
# `graphsieve-eval select`, eval/selection.h).
# Rows (fm; MovieLens offline also mlp with the default and the pilot rule): MovieLens 100K offline (--mode=random) and deployed (the earlier period by rating
# time is the snapshot's input: MovieLens split by time); the preference log (graphsieve-gen
# --exposure=preference --truth, NI_SCALE, default 0.25) offline and deployed on its randomly
# exposed test and on its own test part. Each row has a main run (candidates at α 0.2,
# full) and a budget run (uniform at α 0.3 and 0.5), paired by seed.
# The candidates that transform the score (-lev, -levr, -pos, -user) exist offline only; on the
# deployed rows the default (maec-prop-mix) and the pilot rule (opt-mix) run.
# NI_RUNS (run names, space-separated) limits the runs; JOBS runs at once.
# Environment (scripts/eval-report.sh): EVAL GEN OUT WORK SEEDS FIRST_SEED THREADS JOBS ML.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
SCALE="${NI_SCALE:-0.25}"
JOBS="${JOBS:-1}"

LOG="$WORK/pref-$SCALE.csv"
TEST="$WORK/pref-$SCALE-test.csv"
gs_gen "pref-$SCALE.csv" --preset=kuairec --scale="$SCALE" --exposure=preference --seed=1 \
  --threads=1 --truth --test_output="$TEST" --test_exposure=random --test_instances=200000

CANDIDATES=uniform,maec-prop-mix,maec-prop-mix-lev,maec-prop-mix-levr,maec-prop-mix-pos0.2
CANDIDATES+=,maec-prop-mix-pos0.4,maec-prop-mix-user,opt-mix,opt-mix-lev,opt-mix-levr
COMMON=(--kappas=1 --gammas=0.5 --pilot=fm --pilot_folds=2 --pilot_kappas=1 --quiet)
BUDGET=(--methods=uniform --alphas=0.3,0.5 --include_full=false)
ORACLES=oracle,oracle-p,oracle-mix
declare -A RUN
RUN[ml-random]="--movielens=${ML:-} --mode=random --models=fm --methods=$CANDIDATES"
RUN[ml-random-mlp]="--movielens=${ML:-} --mode=random --models=mlp --methods=uniform,maec-prop-mix,opt-mix"
RUN[ml-deployed]="--movielens=${ML:-} --mode=deployed --models=fm --methods=uniform,maec-prop-mix,opt-mix"
RUN[pref-random-unbiased]="--models=fm --log=$LOG --truth_col=true_prob --test=$TEST --mode=random --methods=$CANDIDATES,$ORACLES"
RUN[pref-random-own]="--models=fm --log=$LOG --truth_col=true_prob --mode=random --methods=$CANDIDATES,$ORACLES"
RUN[pref-deployed-unbiased]="--models=fm --log=$LOG --truth_col=true_prob --test=$TEST --mode=deployed --methods=uniform,maec-prop-mix,opt-mix,oracle,oracle-mix"
RUN[pref-deployed-own]="--models=fm --log=$LOG --truth_col=true_prob --mode=deployed --methods=uniform,maec-prop-mix,opt-mix,oracle,oracle-mix"
ROWS=(ml-random ml-random-mlp ml-deployed pref-random-unbiased pref-random-own pref-deployed-unbiased
      pref-deployed-own)
ORDER=()
for row in "${ROWS[@]}"; do ORDER+=("$row" "$row-budget"); done
if [[ -n "${NI_RUNS:-}" ]]; then
  keep=()
  for r in "${ORDER[@]}"; do [[ " $NI_RUNS " == *" $r "* ]] && keep+=("$r"); done
  ORDER=("${keep[@]}")
fi

run_args() {  # run_args NAME: sets ARGS to the run's graphsieve-eval flags
  local row="${1%-budget}" spec
  spec="${RUN[$row]}"
  # shellcheck disable=SC2206
  local words=($spec)
  if [[ "$1" == *-budget ]]; then
    ARGS=()
    for w in "${words[@]}"; do [[ "$w" == --methods=* ]] || ARGS+=("$w"); done
    ARGS+=("${BUDGET[@]}")
  else
    ARGS=("${words[@]}")
  fi
  ARGS+=("${COMMON[@]}" --title="$1")
}

runs=()
for r in "${ORDER[@]}"; do
  [[ -z "$ML" && "$r" == ml-* ]] && continue
  runs+=("$r")
  run_args "$r"
  gs_eval_cmd "$r" "${ARGS[@]}"
  gs_show "${GS_CMD[@]}" >> "$OUT/commands.txt"
done

worker() {  # takes the next unclaimed run until none is left
  local i r
  for i in "${!runs[@]}"; do
    mkdir "$WORK/claim.$i" 2> /dev/null || continue
    r="${runs[$i]}"
    run_args "$r"
    GS_RECORDED=1 gs_eval "$r" "${ARGS[@]}" || echo "noninferiority: $r not run" >&2
  done
}
for ((j = 0; j < JOBS; j++)); do worker & done
wait

args=()
for row in "${ROWS[@]}"; do
  files=""
  for f in "$OUT/$row.json" "$OUT/$row-budget.json"; do
    [[ -f "$f" ]] && files+="${files:+,}$f"
  done
  [[ -n "$files" ]] && args+=("$row=$files")
done
{
  echo "# Selection by non-inferiority, then saving, α = 0.2"
  echo
  echo "Seeds $FIRST_SEED..$((FIRST_SEED + SEEDS - 1)), paired, target model fm (and mlp on MovieLens offline). Rows: MovieLens 100K"
  echo "offline (\`ml-random\`) and deployed (\`ml-deployed\`: the earlier period by rating time is the"
  echo "snapshot's input); the preference log (graphsieve-gen --exposure=preference, scale $SCALE)"
  echo "offline and deployed on its randomly exposed test (\`-unbiased\`: does not share the log's"
  echo "exposure) and on its own test part (\`-own\`: shares it). MovieLens tests share the"
  echo "log's exposure. Commands in commands.txt; the decision is graphsieve-eval select's."
  echo
  gs_show "$EVAL" select "${args[@]}" >> "$OUT/commands.txt"
  "$EVAL" select "${args[@]}" | sed "s#$OUT/##g"
} > "$OUT/selection.md"
if [[ -z "$ML" ]]; then
  gs_no_movielens "$WORK/no-ml.md"
  { echo; cat "$WORK/no-ml.md"; } >> "$OUT/selection.md"
fi
