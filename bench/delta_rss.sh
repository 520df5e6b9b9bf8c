#!/usr/bin/env bash
# graphsieve-server's memory while delta versions arrive one after another
# (docs/FRESHNESS.md "Memory after many deltas"): does serving delta N over
# the same base copy the base, or keep anything of deltas 1..N-1?
#
# A churned kuairec-shaped log at --scale (bench/churned_base.sh: at scale 1
# ~12M impressions over 14 days; the base is built from its first 13 days)
# and --deltas cumulative delta versions over that base, published one after
# another into a hard-linked copy of the base's root: the last day's rows (in
# time order) are cut into --deltas chunks of equal size and delta i is built
# by `graphsieve-build --delta_of=CURRENT` from chunks 1..i appended to one
# file, as the delta CronJob reads the log that grows since the full build.
# A graphsieve-server polls the root (--poll_interval_seconds 0.5) while a
# client (`graphsieve rates` on 10,000 pairs of the last day, once a second)
# keeps calling; after each delta the script waits until the server logged
# "serving version <delta>" and reads the server's VmRSS (/proc/PID/status)
# and Anonymous (/proc/PID/smaps_rollup); after the base and after 1, 10, 50
# and 100 (and the last) deltas it first waits for "profiled <version>" too
# (the version profiler's scan of base + delta, ~1 min of wall per 11M pairs
# here, is done: the steady figure). Prints both figures at those counts, the
# ratios to the base's, and the delta builds' wall and CPU seconds and the
# server's CPU seconds.
#
# Usage: bench/delta_rss.sh [--build build] [--scale 1] [--deltas 100]
#        [--client 1] [--work /tmp/graphsieve-delta-rss]
# Needs: graphsieve-gen, graphsieve-build, graphsieve-server, graphsieve,
# python3, /usr/bin/time.
set -euo pipefail
BUILD=build SCALE=1 DELTAS=100 CLIENT=1 WORK=/tmp/graphsieve-delta-rss
while (($#)); do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --scale) SCALE=$2; shift 2 ;;
    --deltas) DELTAS=$2; shift 2 ;;
    --client) CLIENT=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    *) echo "delta_rss: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $DELTAS =~ ^[1-9][0-9]*$ ]] || { echo "delta_rss: --deltas '$DELTAS' is not a positive integer" >&2; exit 2; }
BUILDER=$BUILD/builder/graphsieve-build SERVER=$BUILD/server/graphsieve-server
CLI=$BUILD/client/graphsieve
for b in "$BUILDER" "$SERVER" "$CLI"; do
  [[ -x $b ]] || { echo "delta_rss: $b is not built" >&2; exit 2; }
done
source "$(dirname "$0")/churned_base.sh"
echo "delta_rss: $(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
gs_churned_base "$WORK" "$SCALE" "$BUILD"
BASE=$(cat "$GS_BASE_ROOT/CURRENT")
BASE_ROWS=$(($(wc -l < "$GS_BASE_LOG") - 1)) LATER_ROWS=$(($(wc -l < "$GS_LATER_LOG") - 1))
echo "log: kuairec --scale $SCALE churned, base $BASE_ROWS rows (days 1-13),"\
  "deltas over the $LATER_ROWS rows of day 14 in $DELTAS cumulative steps"

RUN=$WORK/rss-run
rm -rf "$RUN" && mkdir -p "$RUN/chunks"
cp -al "$GS_BASE_ROOT" "$RUN/root"  # CURRENT is replaced by rename, never written in place
rm -rf "$RUN/root/holds" "$RUN/root/pins" "$RUN/root/LOCK"
tail -n +2 "$GS_LATER_LOG" > "$RUN/later-body.csv"
split -n "l/$DELTAS" -d -a 4 "$RUN/later-body.csv" "$RUN/chunks/c"
head -1 "$GS_LATER_LOG" > "$RUN/since-base.csv"
awk -F, 'NR == 1 { print "user_id,item_id" } NR > 1 && NR % 7 == 0 && n < 10000 { print $1 "," $2; ++n }' \
  "$GS_LATER_LOG" > "$RUN/pairs.csv"

"$SERVER" --snapshot_root "$RUN/root" --port 0 --admin_port -1 --poll_interval_seconds 0.5 \
  > "$RUN/server.out" 2> "$RUN/server.log" &
SERVER_PID=$!
CLIENT_PID=""
cleanup() {
  [[ -n $CLIENT_PID ]] && kill "$CLIENT_PID" 2>/dev/null || true
  kill "$SERVER_PID" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT

# wait_logged WHAT VERSION: until the server logged "WHAT VERSION" (900 s at most).
wait_logged() {
  local i
  for ((i = 0; i < 9000; ++i)); do
    grep -q "$1 $2" "$RUN/server.log" && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "delta_rss: server exited:" >&2; cat "$RUN/server.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "delta_rss: no '$1 $2' within 900 s; log: $RUN/server.log" >&2
  exit 1
}
memory() {  # "VmRSS_MiB Anonymous_MiB"
  echo "$(awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$SERVER_PID/status")" \
    "$(awk '/^Anonymous:/ { printf "%.1f", $2 / 1024 }' "/proc/$SERVER_PID/smaps_rollup")"
}
# breakdown VERSION: the server's resident MiB by what is mapped
# (/proc/PID/smaps): the base version's files, VERSION's (the delta served),
# other versions' (a held previous delta), other files (the binary, the
# libraries) and anonymous memory. "base delta other_versions other_files anon"
breakdown() {
  python3 - "/proc/$SERVER_PID/smaps" "$RUN/root" "$BASE" "$1" <<'PY'
import sys
smaps, root, base, delta = sys.argv[1:]
kb = {"base": 0, "delta": 0, "versions": 0, "files": 0, "anon": 0}
path = None
for line in open(smaps):
    first = line.split(None, 1)[0]
    if "-" in first and not first.endswith(":"):  # a mapping's header line
        fields = line.split(None, 5)
        path = fields[5].strip() if len(fields) > 5 else ""
    elif first == "Rss:":
        k = int(line.split()[1])
        if path.startswith(root + "/" + base + "/"):
            kb["base"] += k
        elif delta != base and path.startswith(root + "/" + delta + "/"):
            kb["delta"] += k
        elif path.startswith(root + "/"):
            kb["versions"] += k
        elif path.startswith("/"):
            kb["files"] += k
        else:
            kb["anon"] += k
print(" ".join(f"{kb[x] / 1024:.1f}" for x in ("base", "delta", "versions", "files", "anon")))
PY
}
cpu_seconds() {  # of PID (user + system)
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / hz }' "/proc/$1/stat"
}

wait_logged profiled "$BASE"
PORT=$(sed -n 's/.*listening port=\([0-9]*\).*/\1/p' "$RUN/server.out")
if [[ $CLIENT == 1 ]]; then
  (while true; do "$CLI" rates --server "127.0.0.1:$PORT" --input "$RUN/pairs.csv" \
      > /dev/null 2>&1 && echo ok >> "$RUN/client.log" || echo failed >> "$RUN/client.log"
    sleep 1; done) &
  CLIENT_PID=$!
  sleep 3  # a few calls before the steady figure
fi
echo "0 $(memory) 0 0" > "$RUN/rows.txt"
echo "0 $(breakdown "$BASE")" > "$RUN/breakdown.txt"
START=$SECONDS
for ((i = 1; i <= DELTAS; ++i)); do
  cat "$RUN/chunks/c$(printf %04d $((i - 1)))" >> "$RUN/since-base.csv"
  /usr/bin/time -f '%e %U %S' -o "$RUN/time.txt" \
    "$BUILDER" --delta_of=CURRENT --input="$RUN/since-base.csv" --snapshot_root="$RUN/root" \
    --alpha=0.2 --threads=2 --keep=5 --quiet \
    2> "$RUN/build.err" || { echo "delta_rss: delta $i failed:" >&2; cat "$RUN/build.err" >&2; exit 1; }
  V=$(cat "$RUN/root/CURRENT")
  wait_logged "serving version" "$V"
  # At the reported counts the version profiler's scan of the whole version
  # (base + delta) is waited for too, so the figure is the steady one;
  # between them a delta is built as soon as the last one serves and the
  # profiler skips the versions superseded before their turn.
  if ((i == 1 || i == 10 || i == 50 || i == 100 || i == DELTAS)); then
    wait_logged profiled "$V"
  fi
  read -r wall user sys < <(tail -1 "$RUN/time.txt")
  mem=$(memory)
  echo "$i $mem $wall $(python3 -c "print(round($user + $sys, 2))")" >> "$RUN/rows.txt"
  if ((i == 1 || i == 10 || i == 50 || i == 100 || i == DELTAS)); then
    echo "delta $i ($V): VmRSS / Anonymous MiB ${mem/ //}, build ${wall}s wall"
    echo "$i $(breakdown "$V")" >> "$RUN/breakdown.txt"
  fi
done
SERVER_CPU=$(cpu_seconds "$SERVER_PID")
echo "delta_rss: load average at end: $(cut -d' ' -f1-3 /proc/loadavg);" \
  "$((SECONDS - START)) s for $DELTAS deltas; server CPU ${SERVER_CPU} s;" \
  "client calls: $(grep -c ok "$RUN/client.log" 2>/dev/null || true) ok," \
  "$(grep -c failed "$RUN/client.log" 2>/dev/null || true) failed"
python3 - "$RUN/rows.txt" "$DELTAS" "$RUN/breakdown.txt" <<'EOF'
import statistics, sys
rows = {int(r[0]): r[1:] for r in (l.split() for l in open(sys.argv[1]))}
parts = {int(r[0]): [float(x) for x in r[1:]] for r in (l.split() for l in open(sys.argv[3]))}
n = int(sys.argv[2])
rss0, anon0 = float(rows[0][0]), float(rows[0][1])
print(f"{'after':>12} {'VmRSS_MiB':>10} {'ratio':>6} {'Anon_MiB':>9} {'ratio':>6}")
for k in sorted({0, 1, 10, 50, 100, n} & set(rows)):
    rss, anon = float(rows[k][0]), float(rows[k][1])
    label = "the base" if k == 0 else f"{k} deltas"
    print(f"{label:>12} {rss:10.1f} {rss / rss0:6.3f} {anon:9.1f} {anon / anon0:6.3f}")
print("resident MiB by mapping (/proc/PID/smaps) at the same points; 'without the newest'"
      " is VmRSS less the served delta's own files, over the base's VmRSS:")
print(f"{'after':>12} {'base files':>10} {'delta files':>11} {'older vers.':>11}"
      f" {'other files':>11} {'anon. maps':>10} {'w/o newest':>10}")
for k in sorted(parts):
    b, d, v, f, a = parts[k]
    label = "the base" if k == 0 else f"{k} deltas"
    rest = (float(rows[k][0]) - d) / rss0
    print(f"{label:>12} {b:10.1f} {d:11.1f} {v:11.1f} {f:11.1f} {a:10.1f} {rest:10.3f}")
peak = max(float(r[0]) for r in rows.values())
print(f"highest VmRSS read after any delta (a profiler scan may be running): {peak:.1f} MiB = "
      f"{peak / rss0:.3f}x the base's")
builds = [rows[k] for k in range(1, n + 1)]
print("delta builds: wall s median {:.2f} (first {:.2f}, last {:.2f}); CPU s median {:.2f} "
      "(first {:.2f}, last {:.2f}, total {:.1f})".format(
          statistics.median(float(b[2]) for b in builds), float(builds[0][2]),
          float(builds[-1][2]), statistics.median(float(b[3]) for b in builds),
          float(builds[0][3]), float(builds[-1][3]), sum(float(b[3]) for b in builds)))
EOF
