#!/usr/bin/env bash
# The version profiler's cost for a delta version (docs/SERVER.md "The
# profile of a delta version"): the full scan of base + delta against the incremental
# profile from the base's kept state, on a churned kuairec-shaped log at
# --scale (bench/churned_base.sh: the base from days 1-13) and two deltas over
# that base built by `graphsieve-build --delta_of`: one from the first --rows
# rows of day 14 (41,700: 5 minutes of a 12M-a-day log) and one from all of
# day 14. Prints graphsieve-bench-profile's figures for each.
#
# Usage: bench/profile_bench.sh [--build build] [--scale 1] [--rows 41700]
#        [--repeat 3] [--work /tmp/graphsieve-profile-bench] [--remove_work]
# --remove_work deletes --work at the end (the CI test); without it the log
# and the base are kept there and reused by the next run.
# Exits 1 when an incremental profile disagrees with the full scan.
# Needs: graphsieve-gen, graphsieve-build, graphsieve-bench-profile, python3,
# /usr/bin/time.
set -euo pipefail
BUILD=build SCALE=1 ROWS=41700 REPEAT=3 WORK=/tmp/graphsieve-profile-bench REMOVE=0
while (($#)); do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --scale) SCALE=$2; shift 2 ;;
    --rows) ROWS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --remove_work) REMOVE=1; shift ;;
    *) echo "profile_bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $ROWS =~ ^[1-9][0-9]*$ ]] || { echo "profile_bench: --rows '$ROWS' is not a positive integer" >&2; exit 2; }
BUILDER=$BUILD/builder/graphsieve-build BENCH=$BUILD/bench/graphsieve-bench-profile
for b in "$BUILDER" "$BENCH"; do
  [[ -x $b ]] || { echo "profile_bench: $b is not built" >&2; exit 2; }
done
source "$(dirname "$0")/churned_base.sh"
if ((REMOVE)); then trap 'rm -rf "$WORK"' EXIT; fi
echo "profile_bench: $(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
gs_churned_base "$WORK" "$SCALE" "$BUILD"
BASE=$(cat "$GS_BASE_ROOT/CURRENT")
RUN=$WORK/profile-run
rm -rf "$RUN" && mkdir -p "$RUN"
cp -al "$GS_BASE_ROOT" "$RUN/root"  # CURRENT is replaced by rename, never written in place
rm -rf "$RUN/root/holds" "$RUN/root/pins" "$RUN/root/LOCK"
head -n $((ROWS + 1)) "$GS_LATER_LOG" > "$RUN/first-rows.csv"
for input in "$RUN/first-rows.csv" "$GS_LATER_LOG"; do
  "$BUILDER" --delta_of="$BASE" --input="$input" --snapshot_root="$RUN/root" --alpha=0.2 \
    --threads=2 --quiet
  echo "delta from $(($(wc -l < "$input") - 1)) rows of day 14:"
  "$BENCH" --snapshot_root="$RUN/root" --repeat="$REPEAT"
done
