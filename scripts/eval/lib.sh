# Shared helpers of the group scripts of scripts/eval-report.sh (sourced; bash).
# Needs the driver's environment: EVAL, GEN, OUT, WORK, SEEDS, FIRST_SEED, THREADS, ML.
set -euo pipefail

EVAL_LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/eval/model-flags.sh
source "$EVAL_LIB_DIR/model-flags.sh"

# The builder's default rate rule (docs/METHOD.md "Rate rules"): MA-EC with uncertainty and
# score propagation, mixture rule κ 1, propagation weight γ 0.5 (chosen by the worst row of
# docs/eval/selection/selection.md).
DEFAULT_METHOD=maec-prop-mix
DEFAULT_RULE=(--kappas=1 --gammas=0.5)
# The near-oracle pilot rule: opt-mix fed with the target fm trained on the unsampled training
# part, cross-fitted over 2 folds of the pairs (no pair's own label enters its score), κ_p 1.
NEAR_ORACLE=(--pilot=fm --pilot_folds=2 --pilot_kappas=1)

# The text of a command as recorded in commands.txt: binaries by name, inputs by variable.
gs_show() {
  local s="$*"
  s="${s//$EVAL/graphsieve-eval}"
  s="${s//$GEN/graphsieve-gen}"
  if [[ -n "${ML:-}" ]]; then s="${s//$ML/\$ML}"; fi
  s="${s//$WORK/\$WORK}"
  s="${s//$OUT/\$OUT}"
  printf '%s\n' "$s"
}

# gs_run CMD ARGS... : runs a command after appending it to $OUT/commands.txt.
gs_run() {
  gs_show "$@" >> "$OUT/commands.txt"
  "$@"
}

# gs_eval_cmd NAME ARGS... : sets GS_CMD to the graphsieve-eval command of one experiment over
# SEEDS seeds with the model settings (raw results in $WORK/NAME.json and .md).
gs_eval_cmd() {
  local name="$1"
  shift
  GS_CMD=("$EVAL" --seeds="$SEEDS" --first_seed="$FIRST_SEED" --threads="$THREADS"
          "${MODEL_FLAGS[@]}" "$@" --work_dir="$WORK/snapshots" --output_md="$WORK/$name.md"
          --output_json="$WORK/$name.json")
}

# gs_eval NAME ARGS... : records and runs one experiment (progress in $WORK/NAME.log), then
# writes $OUT/NAME.json without timings. To run several at once, record each in order with
# GS_RECORDED=1 gs_eval ... & after `gs_eval_cmd` + `gs_show "${GS_CMD[@]}" >> $OUT/commands.txt`.
gs_eval() {
  local name="$1"
  gs_eval_cmd "$@"
  [[ "${GS_RECORDED:-0}" == 1 ]] || gs_show "${GS_CMD[@]}" >> "$OUT/commands.txt"
  echo "  $name ..." >&2
  mkdir -p "$WORK/snapshots"
  local t0=$SECONDS
  local TIMEFORMAT="$name wall %R s, CPU %U s user %S s system"
  { time "${GS_CMD[@]}" 2> "$WORK/$name.log"; } 2>> "$WORK/timings.txt" || {
    echo "eval-report: $name failed; the last lines of $WORK/$name.log:" >&2
    tail -5 "$WORK/$name.log" >&2
    return 1
  }
  python3 "$EVAL_LIB_DIR/tables.py" scrub "$WORK/$name.json" "$OUT/$name.json" \
    --replace "$WORK=\$WORK" ${ML:+--replace "$ML=\$ML"}
  echo "  $name done in $(( SECONDS - t0 )) s" >&2
}

# gs_gen FILE ARGS... : graphsieve-gen into $WORK/FILE (once per group).
gs_gen() {
  local file="$1"
  shift
  [[ -f "$WORK/$file" ]] || gs_run "$GEN" "$@" --quiet --output="$WORK/$file"
}

# gs_keep NAME : with KEEP=1, takes run NAME's result from the previous run ($PREVIOUS) into $OUT
# with its command (commands.txt) and timing (RUN.txt); returns 1 when the previous run has none.
gs_keep() {
  local name="$1"
  [[ -f "$PREVIOUS/$name.json" ]] || return 1
  cp "$PREVIOUS/$name.json" "$OUT/$name.json"
  grep -F -- "--output_json=\$WORK/$name.json" "$PREVIOUS/commands.txt" >> "$OUT/commands.txt" || true
  sed -n "s/^  \($name wall .*\)/\1/p" "$PREVIOUS/RUN.txt" >> "$WORK/timings.txt"
}

# gs_keep_origin NAME : where the previous run's result NAME came from: the "commit: ..." of the
# previous run's "kept from the previous run (...)" line that names it, if it was itself kept,
# else the previous run's own commit line.
gs_keep_origin() {
  local line
  line="$(grep '^kept from the previous run (' "$PREVIOUS/RUN.txt" 2>/dev/null \
    | grep -E -- "[: ]$1( |\$)" | head -1 || true)"
  if [[ -n "$line" ]]; then
    line="${line#kept from the previous run (}"
    echo "${line%%): *}"
  else
    grep -m1 '^commit:' "$PREVIOUS/RUN.txt" || echo 'commit: unknown'
  fi
}

# gs_keep_note NAMES... : the RUN.txt lines naming the runs kept, one line per commit they were
# run at (a run kept twice keeps the commit it was first run at).
gs_keep_note() {
  (( $# > 0 )) || return 0
  local name origin origins=()
  declare -A names=()
  for name in "$@"; do
    origin="$(gs_keep_origin "$name")"
    [[ -n "${names[$origin]:-}" ]] || origins+=("$origin")
    names[$origin]="${names[$origin]:+${names[$origin]} }$name"
  done
  for origin in "${origins[@]}"; do
    echo "kept from the previous run ($origin): ${names[$origin]}" >> "$WORK/run-notes.txt"
  done
}

# gs_tables ARGS... : scripts/eval/tables.py (Markdown tables, the curve's SVG, budget saved).
gs_tables() { python3 "$EVAL_LIB_DIR/tables.py" "$@"; }

# gs_no_movielens FILE : the line a group writes instead of its MovieLens tables.
gs_no_movielens() {
  printf '_MovieLens 100K was not found (set ML100K_DIR to the directory holding u.data): these tables were not regenerated._\n' > "$1"
}
