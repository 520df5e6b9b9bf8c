#!/usr/bin/env bash
# The fault campaign of docs/RELIABILITY.md: real binaries, real faults, counted.
#
#   scripts/fault-campaign.sh [section ...]      (default: every section, in order)
#
# Sections (each prints "RESULT <section>: ..." lines; the script exits non-zero
# when any check of any section fails):
#   publish-kills  KILLS (200) SIGKILLs of graphsieve-build at random moments of a
#                  publish; after each: CURRENT names a complete version that opens
#                  with full verification, every visible version opens, the pinned
#                  version and CURRENT's version were never deleted by retention.
#   full-disk      publish onto a full tmpfs (root only: mount -t tmpfs): the build
#                  fails with a clear error, nothing half is published, the running
#                  server keeps serving the old version.
#   corruption     byte flips and truncations of every file of a version: each
#                  mutated copy is rejected at load with a reason naming the file,
#                  offline (the verified reader) and by a running server, which keeps
#                  serving the old version.
#   server-kill    SIGKILL + restart of graphsieve-server while `graphsieve filter`
#                  and `graphsieve rates` run with retries: their output is
#                  byte-identical to a run without kills (no decision lost or
#                  duplicated).
#   swaps          REQUESTS (1,000,000) GetSamplingRate calls while SWAPS (20) new
#                  versions are published: 0 failed calls, every call answered by
#                  one version with exactly that version's rates.
#   bad-requests   a stream of malformed and oversize requests: the server answers
#                  each with an error, does not crash, and its RSS stays bounded.
#   delta-kills, delta-retention, delta-corruption, delta-swaps, delta-soak:
#                  the same promises for delta versions (graphsieve-build --delta_of),
#                  described in scripts/campaign/delta-sections.sh. delta-soak
#                  runs an hour (SOAK_SECONDS) and only when named.
#
# Needs the release binaries (cmake --build build-ci --target graphsieve-build
# graphsieve-server graphsieve graphsieve-gen) and "$PY" with grpcio (Debian:
# python3-grpcio, installed by scripts/install-deps.sh). Work files go to
# WORK (/tmp/graphsieve-campaign), removed at the start of each section.
set -euo pipefail
cd "${GRAPHSIEVE_REPO:-$(dirname "$0")/..}"
REPO=$PWD
BUILD_DIR=$(cd "${BUILD_DIR:-build-ci}" && pwd)
WORK=${WORK:-/tmp/graphsieve-campaign}
KILLS=${KILLS:-200}
REQUESTS=${REQUESTS:-1000000}
SWAPS=${SWAPS:-20}
SERVER_KILLS=${SERVER_KILLS:-20}
BAD_REQUESTS=${BAD_REQUESTS:-20000}
GEN=$BUILD_DIR/gen/graphsieve-gen
BUILD=$BUILD_DIR/builder/graphsieve-build
SERVER=$BUILD_DIR/server/graphsieve-server
CLI=$BUILD_DIR/client/graphsieve
PY=${PY:-/usr/bin/python3}  # Debian's, with python3-grpcio
export PYTHONPATH="$BUILD_DIR/client/python:$REPO/client/python${PYTHONPATH:+:$PYTHONPATH}"
FAILURES=0
SERVER_PID=""

for b in "$GEN" "$BUILD" "$SERVER" "$CLI"; do
  [[ -x $b ]] || { echo "missing $b: build it first (see the header of $0)" >&2; exit 2; }
done

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
result() { printf 'RESULT %s\n' "$*"; }
check() {  # check <condition-exit-status> <what>
  if [[ $1 -ne 0 ]]; then
    FAILURES=$((FAILURES + 1))
    printf 'FAILED %s\n' "$2"
  fi
}
now() { date +%s.%N; }
elapsed() { "$PY" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$(now)"; }
rand_between() { "$PY" -c "import random,sys; print(f'{random.uniform(float(sys.argv[1]), float(sys.argv[2])):.3f}')" "$1" "$2"; }
free_port() { "$PY" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])"; }

# verify <snapshot path (root or version dir)>: opens it with full verification
# (the same verified reader as the server: manifest, XXH3-64 of every file,
# RocksDB block checksums) and scores every stored pair. Prints the error.
verify() {
  "$CLI" canary --baseline-snapshot "$1" --candidate-snapshot "$1" \
    --max-mean-delta -1 --max-p99-delta -1 --max-ks -1 --max-fraction-over -1 >/dev/null 2>"$WORK/verify.err"
}

# start_server <root> <port> <logfile> [extra flags]: starts graphsieve-server,
# waits for its first "serving version" line; sets SERVER_PID.
start_server() {
  local root=$1 port=$2 out=$3
  shift 3
  "$SERVER" --snapshot-root "$root" --host 127.0.0.1 --port "$port" --admin-port -1 \
    --poll-interval-seconds 0.2 "$@" >>"$out" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 600); do  # bounded: 60 s
    if grep -q "serving version" "$out" 2>/dev/null && [[ $(grep -c "serving version" "$out") -gt ${SERVING_LINES:-0} ]]; then
      SERVING_LINES=$(grep -c "serving version" "$out")
      return 0
    fi
    kill -0 "$SERVER_PID" 2>/dev/null || { log "server exited: $(tail -3 "$out")"; return 1; }
    sleep 0.1
  done
  log "server did not serve within 60 s"
  return 1
}
stop_server() {
  if [[ -n $SERVER_PID ]]; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
  fi
}
trap 'stop_server' EXIT

served_version() {  # served_version <port>
  "$CLI" status --server "127.0.0.1:$1" --json 2>/dev/null |
    "$PY" -c "import json,sys; print(json.load(sys.stdin).get('active',{}).get('version',''))"
}

# kill_run LABEL I DELAY BUILD-COMMAND...: starts the build in the background, SIGKILLs it
# after DELAY seconds and counts it in the caller's `killed` or `finished` (a run that
# failed by itself fails the check), then counts in `bad_current` a CURRENT of the caller's
# `root` that does not name a version that verifies. Reads the caller's W and root.
kill_run() {
  local label=$1 i=$2 delay=$3 pid status current
  shift 3
  "$@" >/dev/null 2>"$W/build.err" &
  pid=$!
  sleep "$delay"
  kill -KILL "$pid" 2>/dev/null || true
  status=0
  wait "$pid" 2>/dev/null || status=$?
  if [[ $status -eq 137 ]]; then killed=$((killed + 1)); elif [[ $status -eq 0 ]]; then finished=$((finished + 1)); else
    log "run $i exited $status: $(cat "$W/build.err")"; check 1 "$label: run $i failed with exit $status"
  fi
  current=$(cat "$root/CURRENT" 2>/dev/null || true)
  if [[ -z $current || ! -d $root/$current ]] || ! verify "$root"; then
    bad_current=$((bad_current + 1))
    log "run $i (kill after ${delay}s): CURRENT='$current' does not verify: $(cat "$WORK/verify.err" 2>/dev/null)"
  fi
}


# --------------------------------------------------------------------------
section_publish_kills() {
  local W=$WORK/publish-kills root log
  rm -rf "$W" && mkdir -p "$W"
  root=$W/root log=$W/log.csv
  "$GEN" --preset tiny --scale 5 --seed 3 --quiet --output "$log"
  local args=(--input "$log" --snapshot-root "$root" --keep 3 --quiet --json --sketch-dim 8)
  local t0 first total
  t0=$(now)
  first=$("$BUILD" "${args[@]}" --seed 1 | "$PY" -c "import json,sys; print(json.load(sys.stdin)['version'])")
  total=$(elapsed "$t0")
  mkdir -p "$root/pins" && echo "pinned by the fault campaign" >"$root/pins/$first"
  log "publish-kills: clean build ${total}s (version $first, pinned); $KILLS killed runs"
  local killed=0 finished=0 tmp_left=0 half=0 bad_current=0 lost_pinned=0 verified=0
  declare -A seen=()  # versions are immutable once visible: each is verified once
  for i in $(seq 1 "$KILLS"); do
    local delay
    # Kill moments over the whole run, weighted to its second part (write + publish).
    delay=$(rand_between "$("$PY" -c "print($total * 0.2)")" "$("$PY" -c "print($total * 1.1)")")
    kill_run publish-kills "$i" "$delay" "$BUILD" "${args[@]}" --seed $((100 + i))
    [[ -d $root/$first ]] || lost_pinned=$((lost_pinned + 1))
    for d in "$root"/*; do
      local name
      name=$(basename "$d")
      case $name in
        *.tmp) tmp_left=$((tmp_left + 1)) ;;
        [0-9]*T*Z-*)
          if [[ $name != *.* && -z ${seen[$name]:-} ]]; then
            seen[$name]=1
            if verify "$d"; then verified=$((verified + 1)); else
              half=$((half + 1)); log "run $i: visible version $name does not verify: $(cat "$WORK/verify.err")"
            fi
          fi ;;
      esac
    done
  done
  # A clean run afterwards removes the leftovers and publishes.
  "$BUILD" "${args[@]}" --seed 999 >/dev/null
  local leftovers
  leftovers=$(find "$root" -maxdepth 1 \( -name '*.tmp' -o -name '*.deleting' \) | wc -l)
  result "publish-kills: $KILLS runs, $killed SIGKILLed mid-run, $finished finished first;" \
    "CURRENT failed to verify after $bad_current; half/unverifiable visible versions: $half" \
    "(of $verified distinct visible versions verified); pinned version lost: $lost_pinned;" \
    ".tmp dirs seen after kills: $tmp_left; leftovers after the next clean run: $leftovers"
  check $((bad_current + half + lost_pinned + leftovers)) "publish-kills"
}

# --------------------------------------------------------------------------
section_full_disk() {
  # A tmpfs just big enough for the first version plus a fraction of a second
  # one, for several fractions: the disk fills at different moments of the
  # second publish (SST writes, ingest, MANIFEST.json, the rename, CURRENT).
  local W=$WORK/full-disk
  rm -rf "$W" && mkdir -p "$W/mnt"
  local mnt=$W/mnt
  if ! mount -t tmpfs -o size=64m tmpfs "$mnt" 2>"$W/mount.err"; then
    result "full-disk: NOT RUN (cannot mount a tmpfs: $(cat "$W/mount.err"))"
    return
  fi
  "$GEN" --preset tiny --scale 20 --seed 1 --quiet --output "$W/log.csv"
  # The size of one version on tmpfs (KiB, page-rounded by du).
  "$BUILD" --input "$W/log.csv" --snapshot-root "$mnt/probe" --quiet --sketch-dim 8 >/dev/null
  local one_kib
  one_kib=$(du -sk "$mnt/probe" | cut -f1)
  umount "$mnt"
  local trials=0 failed_clearly=0 fitted=0 bad=0 messages=""
  for pct in ${FULL_DISK_PERCENTS:-5 40 80 84 86 88 90 92 94 96 98 100 105}; do
    local size_kib=$((one_kib + one_kib * pct / 100 + 64))
    mount -t tmpfs -o "size=${size_kib}k" tmpfs "$mnt"
    local root=$mnt/root v1 port status=0
    v1=$("$BUILD" --input "$W/log.csv" --snapshot-root "$root" --quiet --json --sketch-dim 8 --seed 1 |
      "$PY" -c "import json,sys; print(json.load(sys.stdin)['version'])")
    port=$(free_port)
    SERVING_LINES=0
    : >"$W/server.log"
    start_server "$root" "$port" "$W/server.log"
    "$BUILD" --input "$W/log.csv" --snapshot-root "$root" --quiet --json --sketch-dim 8 --seed 2 \
      >"$W/second.out" 2>"$W/second.err" || status=$?
    local current versions leftovers served rates_ok=0 verified=0
    current=$(cat "$root/CURRENT")
    versions=$(find "$root" -mindepth 1 -maxdepth 1 -type d -name '[0-9]*T*Z-*' ! -name '*.*' | wc -l)
    leftovers=$(find "$root" -mindepth 1 -maxdepth 1 -name '*.tmp' | wc -l)
    verify "$root" || verified=$?
    sleep 1  # a few refresher polls
    served=$(served_version "$port")
    printf 'user_id,item_id\n1,2\n' | "$CLI" rates --server "127.0.0.1:$port" --input - >/dev/null 2>&1 || rates_ok=$?
    stop_server
    umount "$mnt"
    trials=$((trials + 1))
    local ok=1
    if [[ $status -ne 0 ]]; then
      # Must fail clearly, publish nothing, and the old version keeps serving.
      if grep -q "No space left on device" "$W/second.err" && [[ $current == "$v1" &&
        $served == "$v1" && $versions -eq 1 && $leftovers -eq 0 && $verified -eq 0 && $rates_ok -eq 0 ]]; then
        failed_clearly=$((failed_clearly + 1))
      else ok=0; fi
      messages+="  +${pct}%: $(sed "s|$root/||g" "$W/second.err" | head -c 300 | tr '\n' ' ')"$'\n'
    else
      # It fitted: the new version is CURRENT, verifies, and is served.
      if [[ $current != "$v1" && $served == "$current" && $verified -eq 0 && $rates_ok -eq 0 ]]; then
        fitted=$((fitted + 1))
      else ok=0; fi
    fi
    if [[ $ok -eq 0 ]]; then
      bad=$((bad + 1))
      log "full-disk +${pct}%: exit $status, CURRENT=$current (v1 $v1), versions $versions, .tmp $leftovers," \
        "verify $verified, served $served, rates $rates_ok: $(head -c 300 "$W/second.err")"
    fi
  done
  result "full-disk: one version = $one_kib KiB; $trials second publishes onto a tmpfs of" \
    "(version 1 + N% of a version): $failed_clearly failed with 'No space left on device'," \
    "published nothing and the server kept serving version 1; $fitted fitted and were served;" \
    "$bad violated a rule"
  printf 'RESULT full-disk: where the disk filled:\n%s' "$messages"
  check "$bad" "full-disk"
}

# --------------------------------------------------------------------------
section_corruption() {
  local rc=0
  local W=$WORK/corruption
  rm -rf "$W" && mkdir -p "$W"
  local root=$W/root
  "$GEN" --preset tiny --seed 1 --quiet --output "$W/log.csv"
  local good
  good=$("$BUILD" --input "$W/log.csv" --snapshot-root "$root" --quiet --json --sketch-dim 8 |
    "$PY" -c "import json,sys; print(json.load(sys.stdin)['version'])")
  cp -a "$root/$good" "$W/template"
  local port
  port=$(free_port)
  SERVING_LINES=0
  start_server "$root" "$port" "$W/server.log"
  # Every file of the version x (3 byte flips at random offsets, truncation to
  # half, truncation to 0 bytes). Each trial is a copy under a new version id
  # whose MANIFEST.json "version" is rewritten; then CURRENT names it.
  "$PY" "$REPO/scripts/campaign/corrupt.py" --template "$W/template" --root "$root" \
    --good "$good" --port "$port" --cli "$CLI" --server-log "$W/server.log" \
    --flips-per-file "${FLIPS_PER_FILE:-3}" || rc=$?
  check "${rc:-0}" "corruption"
  stop_server
}

# --------------------------------------------------------------------------
section_server_kill() {
  local W=$WORK/server-kill
  rm -rf "$W" && mkdir -p "$W"
  local root=$W/root
  "$GEN" --preset small --seed 4 --quiet --output "$W/log.csv"
  "$BUILD" --input "$W/log.csv" --snapshot-root "$root" --quiet --sketch-dim 8 --export "$W/export.csv"
  cut -d, -f1,2 "$W/export.csv" >"$W/pairs.csv"
  local port
  port=$(free_port)
  SERVING_LINES=0
  start_server "$root" "$port" "$W/server.log"
  local client_flags=(--server "127.0.0.1:$port" --max-attempts 40 --deadline-seconds 5)
  # Baselines without faults.
  "$CLI" filter "${client_flags[@]}" --input "$W/log.csv" --output "$W/filter.base" --batch-rows 500 2>/dev/null
  "$CLI" rates "${client_flags[@]}" --input "$W/pairs.csv" --output "$W/rates.base" --max-batch-pairs 200 2>/dev/null
  local kills=0 rounds=0 diffs=0 failed=0
  while [[ $kills -lt $SERVER_KILLS ]]; do
    rounds=$((rounds + 1))
    "$CLI" filter "${client_flags[@]}" --input "$W/log.csv" --output "$W/filter.out" --batch-rows 500 2>"$W/filter.err" &
    local fpid=$!
    "$CLI" rates "${client_flags[@]}" --input "$W/pairs.csv" --output "$W/rates.out" --max-batch-pairs 200 2>"$W/rates.err" &
    local rpid=$!
    # Kill the server while both clients run, then restart it on the same port.
    while kill -0 "$fpid" 2>/dev/null || kill -0 "$rpid" 2>/dev/null; do
      sleep "$(rand_between 0.05 0.6)"
      kill -0 "$fpid" 2>/dev/null || kill -0 "$rpid" 2>/dev/null || break
      kill -KILL "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
      kills=$((kills + 1))
      start_server "$root" "$port" "$W/server.log" || { check 1 "server-kill: restart failed"; return; }
    done
    local fs=0 rs=0
    wait "$fpid" || fs=$?
    wait "$rpid" || rs=$?
    if [[ $fs -ne 0 || $rs -ne 0 ]]; then
      failed=$((failed + 1))
      log "round $rounds: filter exit $fs ($(tail -1 "$W/filter.err")), rates exit $rs ($(tail -1 "$W/rates.err"))"
      continue
    fi
    cmp -s "$W/filter.out" "$W/filter.base" || { diffs=$((diffs + 1)); log "round $rounds: filter output differs"; }
    cmp -s "$W/rates.out" "$W/rates.base" || { diffs=$((diffs + 1)); log "round $rounds: rates output differs"; }
  done
  stop_server
  local rows_f rows_r
  rows_f=$(($(wc -l <"$W/filter.base") - 1))
  rows_r=$(($(wc -l <"$W/rates.base") - 1))
  result "server-kill: $kills SIGKILL+restart of the server during $rounds rounds of filter" \
    "($(($(wc -l <"$W/log.csv") - 1)) log rows -> $rows_f kept) + rates ($rows_r pairs);" \
    "client runs failed: $failed; outputs differing from the fault-free run: $diffs"
  check $((failed + diffs)) "server-kill"
}

# --------------------------------------------------------------------------
section_swaps() {
  local rc=0
  local W=$WORK/swaps
  rm -rf "$W" && mkdir -p "$W/exports" "$W/out"
  local root=$W/root
  "$GEN" --preset tiny --scale 5 --seed 5 --quiet --output "$W/log.csv"
  publish_version() {  # publish_version <k>: a new version with alpha varying by k
    local alpha v
    alpha=$("$PY" -c "print(0.1 + 0.01 * ($1 % 40))")
    v=$("$BUILD" --input "$W/log.csv" --snapshot-root "$root" --keep 4 --quiet --json --sketch-dim 8 \
      --alpha "$alpha" --seed "$1" --export "$W/exports/next.csv" |
      "$PY" -c "import json,sys; print(json.load(sys.stdin)['version'])")
    mv "$W/exports/next.csv" "$W/exports/$v.csv"
  }
  publish_version 0
  cut -d, -f1,2 "$W/exports/$(cat "$root/CURRENT").csv" >"$W/pairs.csv"
  local pairs_rows port
  pairs_rows=$(($(wc -l <"$W/pairs.csv") - 1))
  port=$(free_port)
  SERVING_LINES=0
  start_server "$root" "$port" "$W/server.log"
  # Two clients, each call 4 pairs; runs of the whole pairs file until REQUESTS calls.
  local per_run=$(((pairs_rows + 3) / 4)) runs
  runs=$(((REQUESTS + per_run - 1) / per_run))
  log "swaps: $pairs_rows pairs, $per_run calls per run, $runs runs over 2 clients, $SWAPS swaps"
  local t0
  t0=$(now)
  (
    for r in $(seq 0 2 $((runs - 1))); do
      "$CLI" rates --server "127.0.0.1:$port" --input "$W/pairs.csv" --output "$W/out/$r.csv" \
        --max-batch-pairs 4 --with-version --max-attempts 1 2>"$W/out/$r.err" || echo "run $r exit $?" >>"$W/failed"
    done
  ) &
  local c1=$!
  (
    for r in $(seq 1 2 $((runs - 1))); do
      "$CLI" rates --server "127.0.0.1:$port" --input "$W/pairs.csv" --output "$W/out/$r.csv" \
        --max-batch-pairs 4 --with-version --max-attempts 1 2>"$W/out/$r.err" || echo "run $r exit $?" >>"$W/failed"
    done
  ) &
  local c2=$!
  # Spread the swaps over the expected duration: measure the first run's pace.
  local k=1
  while kill -0 "$c1" 2>/dev/null || kill -0 "$c2" 2>/dev/null; do
    if [[ $k -le $SWAPS ]]; then
      publish_version "$k"
      k=$((k + 1))
      sleep "${SWAP_GAP_SECONDS:-5}"
    else
      sleep 1
    fi
  done
  wait "$c1" "$c2" || true
  local seconds
  seconds=$(elapsed "$t0")
  stop_server
  local adopted
  adopted=$(grep -c "serving version" "$W/server.log")
  "$PY" "$REPO/scripts/campaign/check_swaps.py" --exports "$W/exports" --outputs "$W/out" \
    --batch 4 --seconds "$seconds" --published $((k - 1)) --adopted "$adopted" \
    --failed-file "$W/failed" || rc=$?
  check "${rc:-0}" "swaps"
  rm -rf "$W/out"
}

# --------------------------------------------------------------------------
section_bad_requests() {
  local rc=0
  local W=$WORK/bad-requests
  rm -rf "$W" && mkdir -p "$W"
  local root=$W/root
  "$GEN" --preset tiny --seed 1 --quiet --output "$W/log.csv"
  "$BUILD" --input "$W/log.csv" --snapshot-root "$root" --quiet --sketch-dim 8 >/dev/null
  local port
  port=$(free_port)
  SERVING_LINES=0
  start_server "$root" "$port" "$W/server.log" --max-batch-pairs 100000
  "$PY" "$REPO/scripts/campaign/bad_requests.py" --port "$port" --pid "$SERVER_PID" \
    --requests "$BAD_REQUESTS" --max-batch-pairs 100000 || rc=$?
  check "${rc:-0}" "bad-requests"
  stop_server
}

# shellcheck source=campaign/delta-sections.sh
source "$REPO/scripts/campaign/delta-sections.sh"

sections=("$@")
[[ ${#sections[@]} -gt 0 ]] || sections=(publish-kills full-disk corruption server-kill swaps bad-requests
  delta-kills delta-retention delta-corruption delta-swaps)
mkdir -p "$WORK"
for s in "${sections[@]}"; do
  log "=== $s"
  t0=$(now)
  "section_${s//-/_}"
  log "=== $s took $(elapsed "$t0") s"
done
if [[ $FAILURES -gt 0 ]]; then
  echo "fault campaign: $FAILURES check(s) FAILED"
  exit 1
fi
echo "fault campaign: every check passed"
