#!/usr/bin/env bash
# graphsieve end to end on an embedded default, from a fresh Debian 12 machine:
#   install the Debian packages → build → generate a KuaiRec-shaped impression
#   log → build and publish a snapshot → start graphsieve-server → query it
#   with the CLI (exact, inferred and default pairs; status; /metrics) and
#   from Python (the same pairs' rates, equal to the CLI's, and the ingestion
#   filter's keep decisions and log-odds offsets, through the Python package
#   installed with pip into a venv, as the README installs it) → drain it with
#   SIGTERM.
# Environment: SCALE (default 0.1 = 1.2M impressions; 1 = the full 12M preset),
#   SEED (1), OUT (out/demo), PORT (50151), ADMIN_PORT (50152), VENV (.venv:
#   the venv the Python client is installed into),
#   KEEP_RUNNING=1 leaves the server up at the end; SKIP_BUILD=1 uses the
#   binaries already in BUILD_DIR (the CTest e2e test does).
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${SCALE:-0.1}
SEED=${SEED:-1}
OUT=${OUT:-out/demo}
PORT=${PORT:-50151}
ADMIN_PORT=${ADMIN_PORT:-50152}
BUILD_DIR=${BUILD_DIR:-build}
VENV=${VENV:-.venv}

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

if [[ "${SKIP_BUILD:-0}" == "1" ]]; then
  step "1-2/6 using the binaries already built in $BUILD_DIR (SKIP_BUILD=1)"
else
  step "1/6 Debian packages"
  ./scripts/install-deps.sh
  step "2/6 build ($BUILD_DIR, Release, -j2)"
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD_DIR" -j2 --target graphsieve-gen graphsieve-build graphsieve-server \
    graphsieve
fi
BIN="$BUILD_DIR"
GEN="$BIN/gen/graphsieve-gen"; BUILD="$BIN/builder/graphsieve-build"
SERVER="$BIN/server/graphsieve-server"; CLI="$BIN/client/graphsieve"

mkdir -p "$OUT"
LOG="$OUT/impressions.csv"
step "3/6 generate a KuaiRec-shaped log (scale $SCALE, seed $SEED) → $LOG"
"$GEN" --preset kuairec --scale "$SCALE" --seed "$SEED" --pilot --output "$LOG"

step "4/6 build and publish a snapshot → $OUT/snapshots"
"$BUILD" --input "$LOG" --snapshot-root "$OUT/snapshots" --alpha 0.2 --keep 3 \
  --export "$OUT/rates.csv"
echo "CURRENT = $(cat "$OUT/snapshots/CURRENT")"

step "5/6 start graphsieve-server on 127.0.0.1:$PORT (admin http://127.0.0.1:$ADMIN_PORT/)"
"$SERVER" --snapshot-root "$OUT/snapshots" --port "$PORT" --admin-port "$ADMIN_PORT" \
  --poll-interval-seconds 5 >"$OUT/server.log" 2>&1 &
SERVER_PID=$!
cleanup() {
  if [[ "${KEEP_RUNNING:-0}" != "1" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || true
  fi
}
trap cleanup EXIT
for _ in $(seq 1 120); do
  if curl -fs "http://127.0.0.1:$ADMIN_PORT/readyz" >/dev/null 2>&1; then break; fi
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$OUT/server.log"; exit 1; }
  sleep 0.5
done
curl -fs "http://127.0.0.1:$ADMIN_PORT/readyz" >/dev/null || { echo "server not ready"; cat "$OUT/server.log"; exit 1; }

step "6/6 query it"
# Three pairs the builder saw, one unseen pair of known nodes, one unknown user.
{
  echo "user_id,item_id"
  sed -n '2,4p' "$OUT/rates.csv" | cut -d, -f1,2
  u=$(sed -n '2p' "$OUT/rates.csv" | cut -d, -f1)
  seen=$(awk -F, -v u="$u" '$1==u {print $2}' "$OUT/rates.csv" | sort -n | uniq)
  for i in $(seq 0 20000); do
    if ! grep -qx "$i" <<<"$seen"; then echo "$u,$i"; break; fi
  done
  echo "999999999,1"
} >"$OUT/query.csv"
echo "--- graphsieve rates --input $OUT/query.csv"
"$CLI" rates --server "127.0.0.1:$PORT" --input "$OUT/query.csv" | tee "$OUT/answer.csv"
for src in EXACT INFERRED DEFAULT; do
  grep -q ",$src\$" "$OUT/answer.csv" || { echo "demo: expected a $src answer"; exit 1; }
done
echo "--- Python: pip install ./client/python into $VENV (README), then the same pairs and the ingestion filter"
# Debian's /usr/bin/python3 (its site-packages hold python3-grpcio); offline:
# the package's build backend is in the tree and its dependencies are Debian's.
/usr/bin/python3 -m venv --system-site-packages "$VENV"
PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV"/bin/pip install ./client/python
"$VENV"/bin/python - "127.0.0.1:$PORT" "$OUT/answer.csv" <<'EOF'
import csv, struct, sys
from graphsieve_client import IngestionFilter, SamplingRateClient

target, answer = sys.argv[1], sys.argv[2]
with open(answer) as f:
    cli = list(csv.DictReader(f))
users, items = [r["user_id"] for r in cli], [r["item_id"] for r in cli]
with SamplingRateClient(target, timeout_seconds=2) as client:
    batch = client.get_rates(users, items)
    # Every pair as a negative impression with instance key 1000 + i, the first as a positive.
    labels = [1] + [0] * (len(cli) - 1)
    d = IngestionFilter(client).decide(users, items, labels, [1000 + i for i in range(len(cli))])
print("user_id,item_id,rate,source,label,keep,log_odds_offset")
for i, r in enumerate(cli):
    print(f"{users[i]},{items[i]},{batch.rates[i]:.8g},{batch.sources[i]},{labels[i]},"
          f"{int(d.keep[i])},{d.log_odds_offsets[i]:.6f}")
for i, r in enumerate(cli):  # the CLI printed the same float32 (shortest text) and source
    cli_rate = struct.unpack("f", struct.pack("f", float(r["rate"])))[0]
    if batch.rates[i] != cli_rate or batch.sources[i] != r["source"]:
        sys.exit(f"demo: Python and the CLI disagree on pair {i}: "
                 f"{batch.rates[i]} {batch.sources[i]} vs {r['rate']} {r['source']}")
if not d.keep[0]:
    sys.exit("demo: the positive impression was not kept")
print(f"Python agrees with the CLI on {len(cli)} pairs; snapshot {batch.snapshot_version}")
EOF
echo "--- graphsieve status"
"$CLI" status --server "127.0.0.1:$PORT"
echo "--- /metrics (excerpt)"
# Fetched once into a variable: piping curl into `head` or `grep -q`, which stop
# reading early, fails the pipeline under pipefail once the page outgrows a pipe.
METRICS=$(curl -fs "http://127.0.0.1:$ADMIN_PORT/metrics")
grep -E '^graphsieve_' <<<"$METRICS" | sed -n 1,13p
grep -q '^graphsieve_snapshot_serving 1' <<<"$METRICS" \
  || { echo "demo: /metrics does not report a serving snapshot"; exit 1; }
echo
echo "Dashboard: http://127.0.0.1:$ADMIN_PORT/   (KEEP_RUNNING=1 to leave the server up)"
if [[ "${KEEP_RUNNING:-0}" != "1" ]]; then
  kill -TERM "$SERVER_PID"
  rc=0; wait "$SERVER_PID" || rc=$?
  trap - EXIT
  [[ $rc -eq 0 ]] || { echo "demo: server exited $rc after SIGTERM"; tail -5 "$OUT/server.log"; exit 1; }
  echo "Server drained on SIGTERM and exited 0."
else
  trap - EXIT
  echo "Server left running (pid $SERVER_PID)."
fi
