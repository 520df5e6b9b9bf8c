#!/usr/bin/env bash
# Group "selection": every rate-rule candidate on every row at α = 0.2, and the worst-row
# table that chooses the default (docs/eval/QUALITY.md "Selection").
# Rows: MovieLens 100K (fm, mlp) offline (--mode=random) and deployed; the preference log
# (graphsieve-gen --exposure=preference, SELECTION_SCALE, default 1; fm) offline and deployed,
# each on the randomly exposed test and on its own test part.
# Candidates: uniform; the graph default maec-prop-mix at κ 0.1, 0.3, 1, 3 (γ 0.5) and at
# γ 0, 0.8 (κ 0.1); raw maec (floor rule); the cross-fitted fm pilot (opt) and max; the
# default with the item's exposure discounted, η 0.5 and 1 (graphsieve-build --exposure_power).
# Each row is three runs (main: full, uniform and the κ grid; graph: uniform, maec and the γ
# grid; pilot: uniform, opt, max), merged by seed: the same seed gives the same split and the
# same uniform run. JOBS workers take the runs in the priority order below; SELECTION_RUNS
# (names, space-separated) limits them. A run that fails or is stopped is listed as not run.
# With KEEP=1 (scripts/eval-report.sh) a run not in SELECTION_RUNS keeps its result from the
# previous run when that run had the same input (MovieLens rows always; preference-log rows at
# the same SELECTION_SCALE); RUN.txt names the runs kept.
# Environment (scripts/eval-report.sh): EVAL GEN OUT WORK SEEDS FIRST_SEED THREADS JOBS ML.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
SCALE="${SELECTION_SCALE:-1}"
JOBS="${JOBS:-1}"

LOG="$WORK/pref-$SCALE.csv"
TEST="$WORK/pref-$SCALE-test.csv"
gs_gen "pref-$SCALE.csv" --preset=kuairec --scale="$SCALE" --exposure=preference --seed=1 \
  --threads=1 --test_output="$TEST" --test_exposure=random --test_instances=200000

MAIN=(--methods=uniform,maec-prop-mix --kappas=0.1,0.3,1,3 --gammas=0.5)
GRAPH=(--include_full=false --methods=uniform,maec,maec-prop-mix --kappas=0.1 --gammas=0,0.8)
PILOT=(--include_full=false --methods=uniform,opt,max --gammas=0.5 --pilot=fm --pilot_folds=2)
DISC=(--include_full=false --methods=uniform,maec-prop-mix-exp0.5,maec-prop-mix-exp1 --kappas=1
      --gammas=0.5)
ML_ROW=(--movielens="${ML:-}" --models=fm,mlp)
PREF_ROW=(--log="$LOG" --models=fm)

# row name -> input and mode flags
declare -A ROW
ROW[ml-random]="ML_ROW --mode=random"
ROW[ml-deployed]="ML_ROW --mode=deployed"
ROW[pref-random-unbiased]="PREF_ROW --mode=random --test=$TEST"
ROW[pref-deployed-unbiased]="PREF_ROW --mode=deployed --test=$TEST"
ROW[pref-random-own]="PREF_ROW --mode=random"
ROW[pref-deployed-own]="PREF_ROW --mode=deployed"
ROWS=(ml-random ml-deployed pref-random-unbiased pref-deployed-unbiased pref-random-own
      pref-deployed-own)
# The runs in priority order (the main runs first: they hold full and the κ grid).
ORDER=(pref-random-unbiased:main ml-random:main pref-deployed-unbiased:main ml-deployed:main
       pref-random-unbiased:disc pref-deployed-unbiased:disc ml-random:disc ml-deployed:disc
       pref-random-own:main pref-deployed-own:main pref-random-own:disc pref-deployed-own:disc
       ml-random:graph pref-random-unbiased:graph ml-deployed:graph ml-random:pilot
       pref-deployed-unbiased:graph ml-deployed:pilot pref-random-own:graph pref-deployed-own:graph
       pref-random-unbiased:pilot pref-deployed-unbiased:pilot pref-random-own:pilot
       pref-deployed-own:pilot)
ALL_ORDER=("${ORDER[@]}")
if [[ -n "${SELECTION_RUNS:-}" ]]; then
  keep=()
  for r in "${ORDER[@]}"; do [[ " $SELECTION_RUNS " == *" ${r/:/-} "* ]] && keep+=("$r"); done
  ORDER=("${keep[@]}")
fi

run_args() {  # run_args ROW SET: sets ARGS to the run's graphsieve-eval flags
  local spec="${ROW[$1]}" input set
  input="${spec%% *}"
  set="${2^^}"
  local -n in_ref="$input" set_ref="$set"
  # shellcheck disable=SC2206
  ARGS=("${in_ref[@]}" ${spec#* } "${set_ref[@]}" --quiet --title="$1 $2")
}

runs=()
for r in "${ORDER[@]}"; do
  row="${r%%:*}" set="${r##*:}"
  [[ -z "$ML" && "$row" == ml-* ]] && continue
  runs+=("$r")
  run_args "$row" "$set"
  gs_eval_cmd "$row-$set" "${ARGS[@]}"
  gs_show "${GS_CMD[@]}" >> "$OUT/commands.txt"
done

worker() {  # takes the next unclaimed run until none is left
  local i r
  for i in "${!runs[@]}"; do
    mkdir "$WORK/claim.$i" 2> /dev/null || continue
    r="${runs[$i]}"
    run_args "${r%%:*}" "${r##*:}"
    GS_RECORDED=1 gs_eval "${r%%:*}-${r##*:}" "${ARGS[@]}" || echo "selection: ${r} not run" >&2
  done
}
for ((j = 0; j < JOBS; j++)); do worker & done
wait

if [[ -n "${PREVIOUS:-}" ]]; then
  kept=()
  for r in "${ALL_ORDER[@]}"; do
    name="${r/:/-}"
    [[ " ${runs[*]} " == *" $r "* ]] && continue
    [[ "$name" == pref-* ]] && ! grep -qF "pref-$SCALE.csv" "$PREVIOUS/commands.txt" && continue
    gs_keep "$name" && kept+=("$name")
  done
  gs_keep_note "${kept[@]}"
fi

args=()
for row in "${ROWS[@]}"; do
  [[ -z "$ML" && "$row" == ml-* ]] && continue
  files=""
  for set in main graph pilot disc; do
    [[ -f "$OUT/$row-$set.json" ]] && files+="${files:+,}$OUT/$row-$set.json"
  done
  args+=("$row=$files")
done
{
  echo "# Rate-rule selection by the worst row, α = 0.2"
  echo
  echo "Seeds $FIRST_SEED..$((FIRST_SEED + SEEDS - 1)), paired. Rows: MovieLens 100K implicit (fm, mlp)"
  echo "offline (\`random\`: rates on the training part) and deployed (a snapshot of the earlier period"
  echo "served to the later one); the preference log (graphsieve-gen --exposure=preference, scale"
  echo "$SCALE, fm), each mode on its randomly exposed test (\`-unbiased\`: does not share the log's"
  echo "exposure) and on its own test part (\`-own\`: shares it). MovieLens tests share the log's"
  echo "exposure. Commands in commands.txt."
  echo
  python3 "$EVAL_LIB_DIR/selection.py" "${args[@]}"
  echo
  echo "The decision (graphsieve-eval select: non-inferiority on every row, then the largest"
  echo "mean budget saved; these runs have no uniform α grid, so no budget is read):"
  echo
  "$EVAL" select "${args[@]}" | sed -n 's/^Selected/Selected/p'
} > "$OUT/selection.md"
if [[ -z "$ML" ]]; then
  gs_no_movielens "$WORK/no-ml.md"
  { echo; cat "$WORK/no-ml.md"; } >> "$OUT/selection.md"
fi
