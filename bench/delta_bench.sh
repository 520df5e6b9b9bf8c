#!/usr/bin/env bash
# graphsieve-bench-delta: what a delta version costs against a full build, in
# the same run. A generated kuairec-shaped log (graphsieve-gen --preset kuairec
# --scale S) is cut in two: the first (100 - P)% of its rows are the base's log,
# the last P% the new impressions. Measured, each in a fresh snapshot root:
#   full      graphsieve-build over the whole log (what a rebuild costs: the
#             baseline the delta is compared with)
#   base      graphsieve-build over the base's rows (publishes the base; not
#             compared, shown for scale)
#   delta     graphsieve-build --delta_of=CURRENT over the new rows, on the
#             base's root (reads the new rows and the base's node records,
#             writes and publishes the delta)
# Each row: wall seconds, CPU seconds (user + system), peak RSS, the builder's
# stage times; the last line the delta's wall and CPU as a share of the full
# build's (target: <= 10% for a 1% delta). --repeat N runs full and delta N
# times each, interleaved, and reports the medians.
#
# Usage: bench/delta_bench.sh [--build build] [--scale 0.25] [--percent 1]
#        [--threads 2] [--repeat 3] [--work /tmp/graphsieve-delta-bench]
# The 12M-instance figure: bench/delta_bench.sh --scale 1 --percent 1
# Needs: graphsieve-gen, graphsieve-build, python3, /usr/bin/time.
set -euo pipefail
BUILD=build SCALE=0.25 PERCENT=1 THREADS=2 REPEAT=3 WORK=/tmp/graphsieve-delta-bench
while (($#)); do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --scale) SCALE=$2; shift 2 ;;
    --percent) PERCENT=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    *) echo "delta_bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
GEN=$BUILD/gen/graphsieve-gen BUILDER=$BUILD/builder/graphsieve-build
for b in "$GEN" "$BUILDER"; do
  [[ -x $b ]] || { echo "delta_bench: $b is not built" >&2; exit 2; }
done
[[ $REPEAT -ge 1 ]] || { echo "delta_bench: --repeat must be >= 1" >&2; exit 2; }
mkdir -p "$WORK"
LOG=$WORK/kuairec-s$SCALE.csv
[[ -f $LOG ]] || "$GEN" --preset kuairec --scale "$SCALE" --seed 1 --quiet --output "$LOG"
ROWS=$(($(wc -l < "$LOG") - 1))
NEW=$(python3 -c "import math; print(max(1, math.ceil($ROWS * $PERCENT / 100)))")
OLD=$((ROWS - NEW))
BASE_LOG=$WORK/base-s$SCALE-p$PERCENT.csv NEW_LOG=$WORK/new-s$SCALE-p$PERCENT.csv
if [[ ! -f $BASE_LOG || ! -f $NEW_LOG ]]; then
  head -n $((OLD + 1)) "$LOG" > "$BASE_LOG"
  { head -1 "$LOG"; tail -n "$NEW" "$LOG"; } > "$NEW_LOG"
fi
echo "graphsieve-bench-delta: $(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "log: kuairec --scale $SCALE, $ROWS rows; base $OLD rows, delta $NEW rows ($PERCENT%); --threads $THREADS"

# run NAME ROOT ARGS...: one build, its figures appended to $WORK/rows.txt
run() {
  local name=$1 root=$2; shift 2
  /usr/bin/time -f '%e %U %S %M' -o "$WORK/time.txt" \
    "$BUILDER" --snapshot_root="$root" --threads="$THREADS" --keep=100 --json --quiet "$@" \
    > "$WORK/summary.json" 2> "$WORK/stderr.txt" \
    || { echo "delta_bench: $name failed:" >&2; cat "$WORK/stderr.txt" >&2; exit 1; }
  python3 - "$name" "$WORK/time.txt" "$WORK/summary.json" >> "$WORK/rows.txt" <<'EOF'
import json, sys
name, tf, sf = sys.argv[1:]
wall, user, sys_, rss_kb = open(tf).read().split()[-4:]
j = json.loads(open(sf).read().strip().splitlines()[-1])
stages = j.get("stage_seconds") or {t["stage"]: t["seconds"] for t in j.get("timings", [])}
st = " ".join(f"{k} {float(v):.2f}" for k, v in stages.items())
print(name, wall, float(user) + float(sys_), int(rss_kb) / 1048576, st, sep="\t")
EOF
}

rm -f "$WORK/rows.txt"
rm -rf "$WORK/root-base"
run base "$WORK/root-base" --input="$BASE_LOG"
for ((r = 0; r < REPEAT; ++r)); do
  rm -rf "$WORK/root-full"
  run full "$WORK/root-full" --input="$LOG"
  run delta "$WORK/root-base" --delta_of=CURRENT --input="$NEW_LOG"
done
python3 - "$WORK/rows.txt" <<'EOF'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
print(f"{'build':6} {'runs':>4} {'wall_s':>8} {'cpu_s':>8} {'rss_GiB':>8}  stages (wall s, last run)")
med = {}
for name in ("base", "full", "delta"):
    rs = [r for r in rows if r[0] == name]
    wall = statistics.median(float(r[1]) for r in rs)
    cpu = statistics.median(float(r[2]) for r in rs)
    rss = max(float(r[3]) for r in rs)
    med[name] = (wall, cpu)
    print(f"{name:6} {len(rs):4d} {wall:8.2f} {cpu:8.2f} {rss:8.2f}  {rs[-1][4]}")
fw, fc = med["full"]
dw, dc = med["delta"]
print(f"delta / full: wall {100 * dw / fw:.1f}%, CPU {100 * dc / fc:.1f}% (medians of the same run)")
EOF
