#!/usr/bin/env bash
# The freshness lag of the delta CronJob setup, run on this machine
# (docs/FRESHNESS.md "Freshness lag of the CronJob cadence"): what
# graphsieve_freshness_lag_seconds a server shows while a delta build runs
# every --period seconds over a full base.
#
#   base     bench/churned_base.sh: a churned kuairec-shaped log at --scale
#            (at 1: ~12M impressions over 14 days), the base built from its
#            first 13 days; served from a hard-linked copy of its root
#   writer   appends --rows_per_second impressions a second (default 139:
#            12M a day), stamped with the current time, to
#            WORK/.../logs/since-full-build/impressions.csv — the file the
#            CronJob reads (rows of the log's day 14, repeated when used up);
#            --backlog_rows N writes N of them first, as if the day had begun
#            N / rows_per_second seconds ago
#   cron     every --period seconds on the wall clock (cron's "*/5" at 300),
#            the command line of deploy/k8s/delta-cronjob.yaml's container
#            (its args, /logs and /snapshots mapped to the run's directories);
#            a run still going when the next one is due delays it
#            (concurrencyPolicy: Forbid)
#   server   graphsieve-server polling the root every --poll seconds (default:
#            deploy/k8s/server.yaml's --poll-interval-seconds) and watching
#            CURRENT; before the first delta the base is warmed as traffic
#            would: `graphsieve rates` over every 50th row of the base's log
#            pages in the mapped index, then its RSS is the base's figure
#   sampler  graphsieve_freshness_lag_seconds from the server's /metrics and
#            the server's VmRSS every --sample_seconds (10)
# The run lasts until --periods periods (3) after the first delta was served.
# Prints max / p50 / p90 of the lag over the samples from the first delta
# served on, each delta build's rows, wall and CPU seconds, the server's RSS
# on the base against after the deltas, and the server's profile scan of
# each version (seconds, pairs).
#
# Usage: bench/freshness_lag.sh [--build build] [--scale 1] [--period 300]
#        [--periods 3] [--poll S] [--rows_per_second 139] [--backlog_rows 0]
#        [--sample_seconds 10] [--work /tmp/graphsieve-delta-rss]
# (--work is shared with bench/delta_rss.sh: the generated log and the base
# are reused.) Needs: graphsieve-gen, graphsieve-build, graphsieve-server,
# python3, /usr/bin/time.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
BUILD=build SCALE=1 PERIOD=300 PERIODS=3 POLL="" RATE=139 BACKLOG=0 SAMPLE=10
WORK=/tmp/graphsieve-delta-rss
while (($#)); do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --scale) SCALE=$2; shift 2 ;;
    --period) PERIOD=$2; shift 2 ;;
    --periods) PERIODS=$2; shift 2 ;;
    --poll) POLL=$2; shift 2 ;;
    --rows_per_second) RATE=$2; shift 2 ;;
    --backlog_rows) BACKLOG=$2; shift 2 ;;
    --sample_seconds) SAMPLE=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    *) echo "freshness_lag: unknown argument $1" >&2; exit 2 ;;
  esac
done
for v in PERIOD PERIODS RATE SAMPLE; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "freshness_lag: --${v,,} '${!v}' is not a positive integer" >&2; exit 2; }
done
[[ $BACKLOG =~ ^[0-9]+$ ]] || { echo "freshness_lag: --backlog_rows '$BACKLOG' is not a count" >&2; exit 2; }
BUILDER=$(cd "$BUILD" && pwd)/builder/graphsieve-build SERVER=$BUILD/server/graphsieve-server
for b in "$BUILDER" "$SERVER"; do
  [[ -x $b ]] || { echo "freshness_lag: $b is not built" >&2; exit 2; }
done
CRONJOB=$HERE/deploy/k8s/delta-cronjob.yaml
if [[ -z $POLL ]]; then
  POLL=$(sed -n 's/^ *- --poll-interval-seconds=\([0-9.]*\).*/\1/p' "$HERE/deploy/k8s/server.yaml")
  [[ -n $POLL ]] || { echo "freshness_lag: no --poll-interval-seconds in deploy/k8s/server.yaml" >&2; exit 2; }
fi
source "$(dirname "$0")/churned_base.sh"
echo "freshness_lag: $(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
gs_churned_base "$WORK" "$SCALE" "$BUILD"
BASE=$(cat "$GS_BASE_ROOT/CURRENT")

RUN=$WORK/lag-run
rm -rf "$RUN" && mkdir -p "$RUN/logs/since-full-build" "$RUN/deltas"
cp -al "$GS_BASE_ROOT" "$RUN/snapshots"  # CURRENT is replaced by rename, never written in place
rm -rf "$RUN/snapshots/holds" "$RUN/snapshots/pins" "$RUN/snapshots/LOCK"
IMPRESSIONS=$RUN/logs/since-full-build/impressions.csv

# The CronJob's command line: the container's args, paths mapped to this run.
mapfile -t ARGS < <(awk '
  /^ *args:/ { on = 1; next }
  on && /^ *- / { sub(/^ *- /, ""); sub(/ +#.*/, ""); print; next }
  on && /^ *#/ { next }
  on { exit }' "$CRONJOB")
[[ ${ARGS[0]:-} == graphsieve-build ]] || { echo "freshness_lag: $CRONJOB: args do not start with graphsieve-build" >&2; exit 2; }
ARGS[0]=$BUILDER
for k in "${!ARGS[@]}"; do
  ARGS[k]=${ARGS[k]//=\/logs/=$RUN/logs}
  ARGS[k]=${ARGS[k]//=\/snapshots/=$RUN/snapshots}
  # A rule flag file the args name (the CronJob takes the base's rule with
  # --rule-from-base and names none): ConfigMap graphsieve-rule is rule.flags.
  ARGS[k]=${ARGS[k]//=\/etc\/graphsieve\/rule\/rule.flags/=$HERE/deploy/k8s/rule.flags}
done
echo "cron: every $PERIOD s: ${ARGS[*]}"
echo "base: $BASE ($(($(wc -l < "$GS_BASE_LOG") - 1)) rows); server polls every $POLL s;" \
  "writer: $RATE rows/s after a backlog of $BACKLOG rows"

PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

# The writer: rows of day 14 (label and ids), stamped with the current time.
python3 - "$GS_LATER_LOG" "$IMPRESSIONS" "$RATE" "$BACKLOG" > "$RUN/writer.log" 2>&1 <<'EOF' &
import itertools, sys, time
src, dst, rate, backlog = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with open(src) as f:
    next(f)
    rows = [",".join(l.split(",")[:3]) for l in f]
feed = itertools.cycle(rows)
with open(dst, "w") as out:
    out.write("user_id,item_id,label,timestamp\n")
    now = int(time.time())
    for _ in range(backlog):
        out.write(f"{next(feed)},{now}\n")
    out.flush()
    written, start = 0, time.time()
    while True:
        now = time.time()
        due = int((now - start) * rate) - written
        for _ in range(due):
            out.write(f"{next(feed)},{int(now)}\n")
        written += due
        out.flush()
        time.sleep(0.2)
EOF
PIDS+=($!)
while [[ ! -s $IMPRESSIONS ]]; do sleep 0.2; done

"$SERVER" --snapshot_root "$RUN/snapshots" --port 0 --admin_port 0 --poll_interval_seconds "$POLL" \
  > "$RUN/server.out" 2> "$RUN/server.log" &
SERVER_PID=$!
PIDS+=("$SERVER_PID")
for ((i = 0; i < 600; ++i)); do
  grep -q "admin_port=" "$RUN/server.out" && break
  kill -0 "$SERVER_PID" 2>/dev/null || { echo "freshness_lag: server exited:" >&2; cat "$RUN/server.log" >&2; exit 1; }
  sleep 0.5
done
ADMIN=$(sed -n 's/.*admin_port=\([0-9]*\).*/\1/p' "$RUN/server.out")
[[ -n $ADMIN ]] || { echo "freshness_lag: the server printed no admin port" >&2; exit 1; }
PORT=$(tr ' ' '\n' < "$RUN/server.out" | sed -n 's/^port=\([0-9]*\)$/\1/p' | head -1)
[[ -n $PORT ]] || { echo "freshness_lag: the server printed no port" >&2; exit 1; }
# Warm the base as traffic would (the mapped index is paged in by lookups).
awk 'NR == 1 || NR % 50 == 0' "$GS_BASE_LOG" \
  | "$BUILD/client/graphsieve" rates --server "127.0.0.1:$PORT" --input - --output /dev/null \
  || { echo "freshness_lag: warming the base with graphsieve rates failed" >&2; exit 1; }
BASE_RSS=$(awk '/^VmRSS:/ { print $2 }' "/proc/$SERVER_PID/status")
echo "server RSS on the base after a warm-up over every 50th row of its log: $((BASE_RSS / 1024)) MiB"

# The sampler: "epoch_seconds lag_seconds layers version" every $SAMPLE s.
python3 - "$ADMIN" "$SAMPLE" "$SERVER_PID" > "$RUN/samples.txt" 2> "$RUN/sampler.log" <<'EOF' &
import re, sys, time, urllib.request
port, every, pid = sys.argv[1], float(sys.argv[2]), sys.argv[3]
def rss_kb():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0
while True:
    t = time.time()
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        lag = re.search(r"^graphsieve_freshness_lag_seconds (\S+)", text, re.M)
        layers = re.search(r"^graphsieve_snapshot_layers (\S+)", text, re.M)
        version = re.search(r'^graphsieve_snapshot_info\{version="([^"]+)"', text, re.M)
        if lag and version:
            print(f"{t:.1f} {float(lag.group(1)):.1f} {layers.group(1) if layers else '?'} "
                  f"{version.group(1)} {rss_kb()}", flush=True)
    except OSError as e:
        print(f"{t:.1f} {e}", file=sys.stderr, flush=True)
    time.sleep(max(0.0, every - (time.time() - t)))
EOF
PIDS+=($!)

# cron: fire at every multiple of $PERIOD on the wall clock; a run overrunning
# its period delays the next (Forbid). Stops $PERIODS periods after the first
# delta was served.
n=0 first_served="" end=""
give_up=$(($(date +%s) + 10 * PERIOD + 300))
while true; do
  now=$(date +%s)
  if [[ -z $first_served ]] && ((now > give_up)); then
    echo "freshness_lag: no delta served after $n delta builds (server log: $RUN/server.log)" >&2
    tail -5 "$RUN/server.log" >&2
    exit 1
  fi
  if [[ -z $first_served ]] && grep -q '^[0-9.]* [0-9.]* 2 ' "$RUN/samples.txt"; then
    first_served=$(awk '$3 == 2 { print int($1); exit }' "$RUN/samples.txt")
    end=$((first_served + PERIODS * PERIOD))
    echo "first delta served at $(date -u -d @"$first_served" +%H:%M:%S); sampling until $(date -u -d @"$end" +%H:%M:%S)"
  fi
  [[ -n $end ]] && ((now >= end)) && break
  next=$(((now / PERIOD + 1) * PERIOD))
  [[ -n $end ]] && ((next > end)) && { sleep $((end - now)); break; }
  sleep $((next - now))
  n=$((n + 1))
  rows=$(($(wc -l < "$IMPRESSIONS") - 1))
  started=$(date +%s.%N)
  /usr/bin/time -f '%e %U %S' -o "$RUN/deltas/$n.time" "${ARGS[@]}" \
    > "$RUN/deltas/$n.json" 2> "$RUN/deltas/$n.err" || {
    echo "freshness_lag: delta build $n failed:" >&2; cat "$RUN/deltas/$n.err" >&2; exit 1; }
  read -r wall user sys < <(tail -1 "$RUN/deltas/$n.time")
  echo "$n $started $rows $wall $user $sys" >> "$RUN/builds.txt"
  echo "delta $n at $(date -u -d @"${started%.*}" +%H:%M:%S): ~$rows rows, ${wall}s wall," \
    "$(python3 -c "print(round($user + $sys, 2))") CPU-s"
done
echo "freshness_lag: load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$RUN/samples.txt" "$RUN/builds.txt" "$first_served" "$PERIOD" "$POLL" "$SAMPLE" \
  "$RUN/server.log" "$BASE_RSS" <<'EOF'
import re, statistics, sys
samples = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 5]
builds = [l.split() for l in open(sys.argv[2])]
first, period, poll, every = float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
lags = sorted(float(s[1]) for s in samples if float(s[0]) >= first)
def q(p):
    return lags[min(len(lags) - 1, max(0, -(-len(lags) * p // 100) - 1))]
print(f"freshness lag over {len(lags)} samples from the first delta served on "
      f"(one every {every} s; delta period {period} s, server poll {poll} s):")
print(f"  max {lags[-1]:.1f} s   p50 {q(50):.1f} s   p90 {q(90):.1f} s   mean "
      f"{statistics.mean(lags):.1f} s")
served = sorted({s[3] for s in samples if float(s[0]) >= first})
print(f"  versions served in that time: {len(served)}")
walls = [float(b[3]) for b in builds]
cpus = [float(b[4]) + float(b[5]) for b in builds]
print(f"delta builds: {len(builds)}; rows read {builds[0][2]} .. {builds[-1][2]}; wall s max "
      f"{max(walls):.2f} median {statistics.median(walls):.2f}; CPU s max {max(cpus):.2f} "
      f"median {statistics.median(cpus):.2f}")
after_rss = [int(x[4]) for x in samples if float(x[0]) >= first]
if after_rss:
    b = int(sys.argv[8])
    print(f"server RSS: on the base {b / 1024:.1f} MiB (warmed); "
          f"after the first delta max {max(after_rss) / 1024:.1f} MiB = {max(after_rss) / b:.2f}x, "
          f"at the end {after_rss[-1] / 1024:.1f} MiB = {after_rss[-1] / b:.2f}x")
prof = re.compile(r"profiled (\S+): (\d+) pairs.* in ([0-9.e+-]+) s \((\d+) pairs read(:?)")
for m in filter(None, map(prof.search, open(sys.argv[7], errors="replace"))):
    version, pairs, secs, read, incremental = m.groups()
    print(f"  server profile of {version}: {int(pairs):,} pairs, {float(secs):.2f} s, "
          f"{int(read):,} pairs read{' (incremental)' if incremental else ''}")
EOF
