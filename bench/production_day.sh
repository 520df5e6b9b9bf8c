#!/usr/bin/env bash
# One production day end to end (docs/SCALING.md "Memory per impression and
# the 1B plan from measured points"): generate a kuairec-shaped log with users
# growing with it and items as its square root, build it at np = 1, 2 and 4
# (one machine, ranks oversubscribed), and print per stage the wall seconds
# and the peak RSS in bytes per impression (the largest rank's), each np's
# per-rank peak against np = 1's, and each np's rates against np = 1's
# (bench/compare_index.py: identical, or the share that differs and by how
# much; the run fails beyond 1e-6 relative, docs/SCALING.md's target).
#
#   bench/production_day.sh --scale S [--build DIR] [--nps "1 2 4"] [--parts 4]
#       [--threads 2] [--work DIR] [--mpirun CMD]
#
# All np read the same --parts input files (rows dealt round-robin) and write
# --parts partitions, so each rank writes its own parts and the versions'
# index.gsi files can be compared byte for byte. np = 1 runs without mpirun
# with --threads; np > 1 gives each rank max(1, threads / np) threads.
# The peaks come from GRAPHSIEVE_DEBUG_RSS (core/maec/rss_probe.h): the peak
# during each stage, reset between stages. Needs: graphsieve-gen,
# graphsieve-build (with MPI for np > 1), mpirun for np > 1, python3.
set -euo pipefail

SCALE="" BUILD="build" NPS="1 2 4" PARTS=4 THREADS=2 WORK="" SEED=1
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --scale) SCALE="$2"; shift 2 ;;
    --build) BUILD="$2"; shift 2 ;;
    --nps) NPS="$2"; shift 2 ;;
    --parts) PARTS="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    --mpirun) MPIRUN="$2"; shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    *) echo "production_day.sh: unknown argument '$1' (see the header for usage)" >&2; exit 2 ;;
  esac
done
[[ -n "$SCALE" ]] || { echo "production_day.sh: --scale S is required" >&2; exit 2; }
GEN="$BUILD/gen/graphsieve-gen" BUILDER="$BUILD/builder/graphsieve-build"
for b in "$GEN" "$BUILDER"; do
  [[ -x "$b" ]] || { echo "production_day.sh: $b is not an executable (--build DIR)" >&2; exit 2; }
done
[[ "$PARTS" =~ ^[1-9][0-9]*$ ]] || { echo "production_day.sh: --parts must be a positive integer" >&2; exit 2; }
for np in $NPS; do
  [[ "$np" =~ ^[1-9][0-9]*$ ]] || { echo "production_day.sh: --nps holds '$np', not a rank count" >&2; exit 2; }
  (( PARTS % np == 0 )) || { echo "production_day.sh: --parts $PARTS is not a multiple of np $np" >&2; exit 2; }
done
OWN_WORK=0
if [[ -z "$WORK" ]]; then WORK="$(mktemp -d "${TMPDIR:-/tmp}/production_day.XXXXXX")"; OWN_WORK=1; fi
mkdir -p "$WORK"
cleanup() { if [[ $OWN_WORK == 1 ]]; then rm -rf "$WORK"; fi; }
trap cleanup EXIT

echo "production_day: scale $SCALE, nps $NPS, $PARTS parts, $(nproc) cores," \
  "load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
LOG="$WORK/day.csv"
t0=$(date +%s.%N)
"$GEN" --preset kuairec --scale "$SCALE" --users_scale "$SCALE" --seed "$SEED" --quiet --output "$LOG"
INPUTS=""
for ((k = 0; k < PARTS; k++)); do
  part="$WORK/day.part$k.csv"
  { head -1 "$LOG"; tail -n +2 "$LOG" | awk -v k="$k" -v n="$PARTS" 'NR % n == k'; } > "$part"
  INPUTS+="${INPUTS:+,}$part"
done
rm -f "$LOG"
echo "gen + split: $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)") s"

for np in $NPS; do
  root="$WORK/root-np$np"
  rm -rf "$root"
  if [[ $np == 1 ]]; then
    cmd=("$BUILDER" --threads "$THREADS")
  else
    read -r -a mpi <<< "$MPIRUN"
    cmd=("${mpi[@]}" -np "$np" "$BUILDER" --threads "$(( THREADS / np > 0 ? THREADS / np : 1 ))")
  fi
  if ! GRAPHSIEVE_DEBUG_RSS=1 "${cmd[@]}" --input "$INPUTS" --partitions "$PARTS" \
      --snapshot_root "$root" --json --quiet > "$WORK/np$np.json" 2> "$WORK/np$np.err"; then
    echo "production_day.sh: the np $np build failed:" >&2
    cat "$WORK/np$np.err" >&2
    exit 1
  fi
done
echo "load average at end $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$WORK" "$(dirname "$0")/compare_index.py" "$PARTS" $NPS <<'EOF'
import json, os, re, subprocess, sys

work, compare, parts, nps = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
LINE = re.compile(r"^rss rank (\d+) stage (.+?) peak .* peak_kb (\d+)$")
WALL = re.compile(r" wall ([0-9.]+) s ")
runs = {}
for np in nps:
    with open(os.path.join(work, f"np{np}.json")) as f:
        report = json.loads(f.read().strip().splitlines()[-1])
    stages = {}  # name (pipeline stages indented) -> [max peak bytes over ranks, rank 0's seconds]
    order = []
    with open(os.path.join(work, f"np{np}.err")) as f:
        for line in f:
            m = LINE.match(line.rstrip("\n"))
            if not m:
                continue
            rank, key, kb = int(m.group(1)), m.group(2).rstrip(), int(m.group(3))
            if key not in stages:
                stages[key] = [0, None]
                order.append(key)
            stages[key][0] = max(stages[key][0], kb * 1024)
            w = WALL.search(line)
            if rank == 0 and w:
                stages[key][1] = float(w.group(1))
    # The pipeline line's own peak covers only its end (its stages reset the
    # peak): the pipeline's peak is the largest of its stages'.
    subs = [v[0] for k, v in stages.items() if k.startswith("  ")]
    if "pipeline" in stages and subs:
        stages["pipeline"][0] = max(stages["pipeline"][0], max(subs))
    peaks = [r["peak_rss_bytes"] for r in report.get("ranks", [])] or [report["peak_rss_bytes"]]
    runs[np] = dict(report=report, stages=stages, order=order, rank_peak=max(peaks))

first = nps[0]
instances = runs[first]["report"]["instances"]
order = [k for k in runs[first]["order"] if k not in ("open", "finish")]
print(f"\ninstances {instances:,}, pairs {runs[first]['report']['pairs']:,}")
head = f"{'stage':<14}" + "".join(f" | np {np}: {'s':>7} {'B/imp':>6}" for np in nps)
print(head)
print("-" * len(head))
for k in order:
    row = f"{k:<14}"
    for np in nps:
        peak, wall = runs[np]["stages"].get(k, [0, None])
        w = f"{wall:7.2f}" if wall is not None else f"{'':>7}"
        row += f" |       {w} {peak / instances:6.1f}"
    print(row)
row = f"{'whole build':<14}"
for np in nps:
    r = runs[np]
    row += f" |       {r['report']['total_seconds']:7.2f} {r['rank_peak'] / instances:6.1f}"
print(row)
print("\nCPU seconds per build stage (rank 0; the wall seconds above depend on the load):")
for np in nps:
    cpu = runs[np]["report"].get("stage_cpu_seconds", {})
    ranks = runs[np]["report"].get("ranks") or []
    every = sum(r["cpu_seconds"] for r in ranks) if ranks else sum(cpu.values())
    print(f"np {np}: " + ", ".join(f"{k} {v:.2f}" for k, v in cpu.items() if v >= 0.005) +
          f"; every rank's whole run {every:.2f} CPU-s = {1e6 * every / instances:.3f} CPU-us "
          f"per instance")
print("\n(B/imp: the largest rank's peak RSS during the stage over all the log's instances;")
print(" sub-stages of the pipeline are indented; whole build: total seconds, largest rank's peak)")
base = runs[first]["rank_peak"]
status = 0
for np in nps:
    r = runs[np]
    line = (f"np {np}: per-rank peak {r['rank_peak'] / 2**30:.3f} GiB = "
            f"{r['rank_peak'] / base:.3f} x np {first}'s")
    if np != first:
        differ = total = 0
        worst = 0.0
        for k in range(parts):
            rel = os.path.join(f"part-{k}", "index.gsi")
            a = os.path.join(work, f"root-np{first}", runs[first]["report"]["version"], rel)
            b = os.path.join(work, f"root-np{np}", r["report"]["version"], rel)
            out = subprocess.run([compare, "--tolerance", "1e-6", a, b], capture_output=True,
                                 text=True)
            status |= out.returncode
            first_line = out.stdout.splitlines()[0] if out.stdout else out.stderr.strip()
            m = re.search(r"rates that differ: (\d+) of (\d+), largest relative difference (\S+)",
                          first_line)
            if m:
                differ, total = differ + int(m.group(1)), total + int(m.group(2))
                worst = max(worst, float(m.group(3)))
            elif not first_line.startswith("identical"):
                print(f"np {np}, part {k}: {first_line}")
        line += (f"; rates against np {first}: identical" if differ == 0 else
                 f"; rates against np {first}: {differ:,} of {total:,} differ, largest relative "
                 f"difference {worst:.2g} (target <= 1e-6)")
    print(line)
sys.exit(status)
EOF
