#!/usr/bin/env bash
# Group "unbiased": the preference log with a randomly exposed test, both modes,
# and the same log's own (exposure-sharing) test part, as a recovery table.
# Environment (scripts/eval-report.sh): EVAL GEN OUT WORK SEEDS FIRST_SEED THREADS ML.
# UNBIASED_SCALE (default 1) sets the preference log's scale; UNBIASED_MODELS (default fm).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../../.." && pwd)"
source "$ROOT/scripts/eval/model-flags.sh"
SCALE="${UNBIASED_SCALE:-1}"
MODELS="${UNBIASED_MODELS:-fm}"
SEEDS="${SEEDS:-8}"
FIRST_SEED="${FIRST_SEED:-1}"
THREADS="${THREADS:-1}"
mkdir -p "$OUT" "$WORK"

log_cmd() { echo "$*" | sed "s#$WORK/##g; s#$ROOT/##g" >> "$OUT/commands.txt"; }
run() {  # run NAME ARGS...: one graphsieve-eval run into $WORK/NAME.{md,json}
  local name="$1"; shift
  local args=("$@" --seeds="$SEEDS" --first_seed="$FIRST_SEED" --threads="$THREADS"
              "${MODEL_FLAGS[@]}" --models="$MODELS" --quiet --title="$name")
  log_cmd graphsieve-eval "${args[@]}"
  nice -n 5 "$EVAL" "${args[@]}" --output_md="$WORK/$name.md" --output_json="$WORK/$name.json"
}

LOG="$WORK/pref-$SCALE.csv"
TEST="$WORK/pref-$SCALE-test.csv"
GEN_ARGS=(--preset=kuairec --scale="$SCALE" --exposure=preference --seed=1 --threads=1 --quiet
          --output="$LOG" --test_output="$TEST" --test_exposure=random --test_instances=200000)
log_cmd graphsieve-gen "${GEN_ARGS[@]}"
nice -n 5 "$GEN" "${GEN_ARGS[@]}"

# The candidates: the current default (maec-prop, floor 0.01, γ 0.5), the
# graph rates with other propagation settings, the cross-fitted fm pilot and
# the max ensemble.
METHODS=(--methods=uniform,maec,maec-prop,opt,max --pilot=fm --pilot_folds=2 --gammas=0.5)
rows=()
for mode in random deployed; do
  run "pref-$mode-unbiased" --log="$LOG" --test="$TEST" --mode="$mode" "${METHODS[@]}"
  run "pref-$mode-own" --log="$LOG" --mode="$mode" "${METHODS[@]}"
  rows+=("$mode, random-exposure test=$WORK/pref-$mode-unbiased.json"
         "$mode, the log's own test part=$WORK/pref-$mode-own.json")
done
{
  echo "# The preference log (scale $SCALE), α = 0.2: recovery on a randomly exposed test"
  echo
  echo "Recovery = (AUC_candidate − AUC_uniform) / (AUC_full − AUC_uniform), paired over seeds"
  echo "$FIRST_SEED..$((FIRST_SEED + SEEDS - 1)) (± standard errors). Rows marked \"random-exposure"
  echo "test\" do not share the log's exposure; \"the log's own test part\" rows do."
  echo
  python3 "$ROOT/scripts/eval/recovery.py" "${rows[@]}"
} > "$OUT/recovery.md"
for f in "$WORK"/pref-*.md; do
  # the per-run reports without their runtime (deterministic bytes)
  sed -E "s#$WORK/##g" "$f" | sed -E 's/ Runtime [0-9]+ s\.//; s/ \([0-9.]+s rates, [0-9.]+s train[^)]*\)//' > "$OUT/$(basename "$f")"
done
