#!/usr/bin/env bash
# graphsieve-bench-scaling: the builder end to end on kuairec-shaped logs whose
# users and items grow with the impressions (graphsieve-gen --scale S
# --nodes_scale S), at np = 1 and np = 2 in the same run: wall, CPU and peak
# RSS per rank, the stage times; then, outside the timed runs, whether np = 1
# and np = 2 give the same rates (their --export CSVs at the --compare scales).
# docs/SCALING.md has the measured table and the cost model built from it.
#
# --baseline ROUTE adds, at np = 1, a run with `--resistance ROUTE` (e.g.
# one-sided, auto's choice before the control variate) measured in the same
# run; --baseline_binary PATH adds, at np = 1, a run of another
# graphsieve-build (e.g. main's, built in another directory) on the same
# inputs, right before this build's runs of each scale (row label "base");
# --nps "1 2" picks the process counts; --shape users generates logs whose
# users grow with the impressions and whose items grow as their square root
# (graphsieve-gen --scale S --users_scale S) instead of both growing; --partitions P writes partitioned
# versions (with P a multiple of np every rank writes its own parts, no
# gather: core/offline/dist_parts.h). Each row also gives the CPU seconds
# of every stage (user + system of the process during the stage; the
# comparable figure on a shared machine) when the binary reports them.
#
# Usage: bench/scaling_bench.sh [--build build-ci] [--scales "0.5 1 2 4"] [--work DIR]
#        [--parts 4] [--compare "0.5"] [--baseline one-sided] [--baseline_binary PATH]
#        [--nps "1 2"] [--partitions P] [--shape nodes|users] [--repeat R]
# --repeat R runs every scale's row set R times, alternating the binaries
# (base, this, base, this, ...): on a shared machine judge repeated ratios.
# Needs: graphsieve-gen, graphsieve-build built with MPI, mpirun, python3.
set -euo pipefail
BUILD=build-ci SCALES="0.5 1 2 4" WORK=/tmp/graphsieve-scaling PARTS=4 COMPARE="0.5" BASELINE="" NPS="1 2"
BASELINE_BINARY="" PARTITIONS=1 SHAPE=nodes REPEAT=1
while (($#)); do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --scales) SCALES=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --parts) PARTS=$2; shift 2 ;;
    --compare) COMPARE=$2; shift 2 ;;
    --baseline) BASELINE=$2; shift 2 ;;
    --baseline_binary) BASELINE_BINARY=$2; shift 2 ;;
    --partitions) PARTITIONS=$2; shift 2 ;;
    --nps) NPS=$2; shift 2 ;;
    --shape) SHAPE=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    *) echo "scaling_bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
GEN=$BUILD/gen/graphsieve-gen BUILDER=$BUILD/builder/graphsieve-build
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none"  # threads of a rank on every core (graphsieve-build warns otherwise)
if [[ -n $BASELINE_BINARY && ! -x $BASELINE_BINARY ]]; then
  echo "scaling_bench: --baseline_binary $BASELINE_BINARY is not an executable" >&2; exit 2
fi
case "$SHAPE" in
  nodes) GEN_SHAPE=--nodes_scale ;;
  users) GEN_SHAPE=--users_scale ;;
  *) echo "scaling_bench: --shape must be nodes or users, got $SHAPE" >&2; exit 2 ;;
esac
mkdir -p "$WORK"
echo "graphsieve-bench-scaling: $(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-3s %11s %6s %9s %9s %9s %12s %-5s %s\n' scale np instances rank wall_s cpu_s rss_GiB route bin \
  'stages: wall s (CPU s)' 

for S in $SCALES; do
  LOG=$WORK/kuairec-$SHAPE$S.csv
  [[ -f $LOG ]] || "$GEN" --preset kuairec --scale "$S" "$GEN_SHAPE" "$S" --seed 1 --quiet --output "$LOG"
  # PARTS files with the header each, rows dealt round-robin: both np read the same inputs.
  INPUTS=""
  for ((k = 0; k < PARTS; k++)); do
    P=$WORK/kuairec-$SHAPE$S.part$k.csv
    [[ -f $P ]] || { head -1 "$LOG" > "$P"; tail -n +2 "$LOG" | awk -v k=$k -v n=$PARTS 'NR % n == k' >> "$P"; }
    INPUTS+="${INPUTS:+,}$P"
  done
  RUNS=""
  for ((rep = 0; rep < REPEAT; rep++)); do
    [[ -n $BASELINE_BINARY ]] && RUNS+=" 1:auto:base"
    for NP in $NPS; do RUNS+=" $NP:auto:this"; done
    [[ -n $BASELINE ]] && RUNS+=" 1:$BASELINE:this"
  done
  for RUN in $RUNS; do
    IFS=: read -r NP ROUTE BIN <<< "$RUN"
    EXE=$BUILDER
    [[ $BIN == base ]] && EXE=$BASELINE_BINARY
    ROOT=$WORK/root-$S-$NP; rm -rf "$ROOT"
    # Same core budget: np=1 with 2 threads, np=2 with 1 thread per rank.
    THREADS=$((2 / NP))
    TAG=$S-$NP-$ROUTE-$BIN
    $MPIRUN -np $NP "$EXE" --input "$INPUTS" --snapshot_root "$ROOT" --threads $THREADS --json --quiet \
      --resistance "$ROUTE" --partitions "$PARTITIONS" > "$WORK/report-$TAG.json" 2> "$WORK/stderr-$TAG.txt"
    python3 - "$WORK/report-$TAG.json" "$S" "$NP" "$BIN" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
cpu = r.get("stage_cpu_seconds", {})
stages = " ".join(f"{k}={v:.1f}" + (f"({cpu[k]:.1f})" if k in cpu else "")
                  for k, v in r["stage_seconds"].items() if v >= 0.05)
# A binary built without MPI runs one process and reports no "ranks": its
# own totals then (CPU = the stages' CPU seconds).
ranks = r.get("ranks") or [{"rank": 0, "wall_seconds": r["total_seconds"],
                            "cpu_seconds": sum(cpu.values()), "peak_rss_bytes": r["peak_rss_bytes"]}]
for k in ranks:
    print(f"{sys.argv[2]:<6} {sys.argv[3]:<3} {r['instances']:>11} {k['rank']:>6} {k['wall_seconds']:>9.2f} "
          f"{k['cpu_seconds']:>9.2f} {k['peak_rss_bytes'] / 2**30:>9.3f} {r['resistance_route']:>12} "
          f"{sys.argv[4]:<5} " + (stages if k['rank'] == 0 else ""))
PY
    rm -rf "$ROOT"
  done
done
# Identical rates (not timed): the exported CSVs of np = 1 and np = 2.
for S in $COMPARE; do
  INPUTS=$(ls "$WORK"/kuairec-$SHAPE$S.part*.csv | paste -sd, -)
  for NP in 1 2; do
    rm -rf "$WORK/root-cmp"
    $MPIRUN -np $NP "$BUILDER" --input "$INPUTS" --snapshot_root "$WORK/root-cmp" --threads $((2 / NP)) --quiet \
      --export "$WORK/export-$S-$NP.csv" 2> "$WORK/stderr-cmp-$S-$NP.txt"
  done
  rm -rf "$WORK/root-cmp"
  if [[ -f $WORK/export-$S-1.csv && -f $WORK/export-$S-2.csv ]]; then
    python3 - "$WORK/export-$S-1.csv" "$WORK/export-$S-2.csv" "$S" <<'PY'
import sys
def rates(path):
    with open(path) as f:
        next(f)
        return {tuple(l.split(",", 2)[:2]): float(l.rsplit(",", 1)[1]) for l in f}
a, b = rates(sys.argv[1]), rates(sys.argv[2])
assert a.keys() == b.keys(), "np=1 and np=2 exported different pairs"
worst = max(abs(a[k] - b[k]) / a[k] for k in a)
print(f"scale {sys.argv[3]}: {len(a)} pairs, max relative rate difference np=2 vs np=1: {worst:.3g}")
PY
    rm -f "$WORK/export-$S-1.csv" "$WORK/export-$S-2.csv"
  fi
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
