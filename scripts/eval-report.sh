#!/usr/bin/env bash
# Regenerates every table and figure of docs/EVALUATION.md into docs/eval/<group>/.
#
#   scripts/eval-report.sh                 # every group (hours on 2 cores; docs/EVALUATION.md "Reproduce and runtime")
#   ONLY=headline scripts/eval-report.sh   # one group: the headline table (5 minutes on a quiet 2-core machine)
#   ONLY=curve scripts/eval-report.sh      # AUC vs α and the budget saved at equal AUC
#   CURVE_SETS="ml-fm-random ml-fm-deployed" ONLY=curve scripts/eval-report.sh   # part of a group
#   JOBS=2 ...                             # groups that have independent runs start JOBS at once
#   OUT_ROOT=/tmp/check ONLY=headline scripts/eval-report.sh   # elsewhere (e.g. to diff two runs)
#   KEEP=1 CURVE_SETS="gp1-fm-random" ONLY=curve scripts/eval-report.sh
#                                          # rerun some sets, keep the others' results from the last
#                                          # run (their commit is named in RUN.txt)
#
# Builds graphsieve-eval and graphsieve-gen (Release, BUILD_DIR, default build/), then runs each
# group script scripts/eval/groups/<name>.sh with this environment:
#   EVAL, GEN     the two binaries
#   OUT           docs/eval/<name> (emptied first); the group writes its tables ($OUT/*.md:
#                 deterministic, the same commit and seeds give the same bytes), appends every
#                 command it runs to $OUT/commands.txt, and may write *.json, *.csv, *.svg
#   WORK          a scratch directory of its own (logs, generated inputs, raw results)
#   SEEDS         seeds per row (default 8), FIRST_SEED (default 1)
#   THREADS       pipeline threads per run (default 1; the tables do not depend on it)
#   JOBS          independent runs a group may start at once (default 1)
#   PREVIOUS      with KEEP=1: the group's previous output (a copy), for groups that can keep
#                 part of it (curve); notes for RUN.txt go to $WORK/run-notes.txt
#   ML            the MovieLens 100K directory (holding u.data), or empty when absent: the group
#                 then writes a line saying so instead of its MovieLens tables
# and writes $OUT/RUN.txt (commit, date, wall time, nproc, load) after the group.
# MovieLens is looked for in $ML100K_DIR, ../shared/data/ml-100k next to the checkout and
# /work/shared/data/ml-100k; it is never copied into the repository.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build}"
export SEEDS="${SEEDS:-8}" FIRST_SEED="${FIRST_SEED:-1}" THREADS="${THREADS:-1}" JOBS="${JOBS:-1}"
OUT_ROOT="${OUT_ROOT:-$ROOT/docs/eval}"

ML=""
for d in ${ML100K_DIR:+"$ML100K_DIR"} "$ROOT/../shared/data/ml-100k" /work/shared/data/ml-100k; do
  if [[ -f "$d/u.data" ]]; then ML="$(cd "$d" && pwd)"; break; fi
  if [[ -n "${ML100K_DIR:-}" ]]; then break; fi  # an explicit directory is the only one tried
done
export ML

if [[ ! -f "$BUILD/build.ninja" && ! -f "$BUILD/Makefile" ]]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$BUILD" -j2 --target graphsieve-eval graphsieve-gen
export EVAL="$BUILD/eval/graphsieve-eval" GEN="$BUILD/gen/graphsieve-gen"

groups=()
for g in "$ROOT"/scripts/eval/groups/*.sh; do
  name="$(basename "$g" .sh)"
  if [[ -z "${ONLY:-}" || " ${ONLY//,/ } " == *" $name "* ]]; then groups+=("$name"); fi
done
if (( ${#groups[@]} == 0 )); then
  echo "eval-report: no group named '${ONLY:-}' in scripts/eval/groups/" >&2
  exit 2
fi

if [[ -n "${WORK_DIR:-}" ]]; then
  SCRATCH="$WORK_DIR"
  mkdir -p "$SCRATCH"
else
  # A scratch directory made here is removed after a run that finished; a
  # failed run keeps it to look at.
  SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/graphsieve-eval-report.XXXXXX")"
  trap 'rc=$?; if ((rc == 0)); then rm -rf "$SCRATCH"; else echo "eval-report: scratch kept in $SCRATCH" >&2; fi' EXIT
fi
commit="$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
dirty="$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null | grep -v -E ' docs/(eval/|EVALUATION\.md$)' | head -1 || true)"
for name in "${groups[@]}"; do
  export OUT="$OUT_ROOT/$name" WORK="$SCRATCH/$name" PREVIOUS=""
  rm -rf "$WORK"
  mkdir -p "$WORK"
  if [[ "${KEEP:-0}" == 1 && -d "$OUT" ]]; then
    PREVIOUS="$WORK/previous"
    cp -r "$OUT" "$PREVIOUS"
  fi
  rm -rf "$OUT"
  mkdir -p "$OUT"
  echo "eval-report: group $name (SEEDS=$SEEDS, scratch $WORK) ..." >&2
  t0=$(date +%s)
  load0="$(cut -d' ' -f1-3 /proc/loadavg)"
  bash "$ROOT/scripts/eval/groups/$name.sh"
  wall=$(( $(date +%s) - t0 ))
  {
    echo "group: $name"
    echo "commit: $commit${dirty:+ (with uncommitted changes)}"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "wall_seconds: $wall"
    echo "seeds: $FIRST_SEED..$(( FIRST_SEED + SEEDS - 1 ))"
    echo "threads: $THREADS"
    echo "nproc: $(nproc)"
    echo "load_at_start: $load0"
    echo "load_at_end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "movielens: $([[ -n "$ML" ]] && echo found || echo absent)"
    if [[ -f "$WORK/timings.txt" ]]; then echo "runs:"; sed 's/^/  /' "$WORK/timings.txt"; fi
    if [[ -f "$WORK/run-notes.txt" ]]; then cat "$WORK/run-notes.txt"; fi
  } > "$OUT/RUN.txt"
  echo "eval-report: group $name done in $wall s -> $OUT" >&2
done
# The report quotes the generated tables between its markers (docs/EVALUATION.md).
if [[ "$OUT_ROOT" == "$ROOT/docs/eval" ]]; then
  python3 "$ROOT/scripts/eval/tables.py" stitch "$ROOT/docs/EVALUATION.md" "$OUT_ROOT"
fi
