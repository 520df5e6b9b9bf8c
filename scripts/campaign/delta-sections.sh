# Delta sections of scripts/fault-campaign.sh (sourced by it; uses its helpers:
# log, result, check, now, elapsed, rand_between, free_port, verify,
# start_server, stop_server, served_version and the binaries' paths).
#
#   delta-kills      DELTA_KILLS (200) SIGKILLs of graphsieve-build --delta_of at
#                    random moments (read, compute, write, publish, retention
#                    with --keep 3), one full build in every 20 runs: after each
#                    CURRENT verifies, every visible version verifies once (no
#                    half delta), and a delta's base is never deleted while the
#                    delta is kept.
#   delta-retention  a server serves base + delta; the base directory is deleted
#                    (as a retention run that did not see the delta would): the
#                    server keeps answering from the open files; the next
#                    --delta_of CURRENT is refused naming the base; a full
#                    build then recovers. And retention with --keep 1 over many
#                    deltas never deletes their base.
#   delta-corruption byte flips and truncations of every file of a delta version
#                    (scripts/campaign/corrupt.py with the delta as template):
#                    rejected offline and by the server naming the file; the
#                    server keeps serving base + the previous delta.
#   delta-swaps      at least DELTA_CALLS (1,000,000) GetSamplingRate calls of
#                    4 pairs, made until DELTA_SWAPS (100) deltas and FULL_SWAPS
#                    (2) full versions are published and adopted: 0 failed calls, 0 calls
#                    answered by two versions, every row equal to the rate its
#                    version gave in one whole-file call (scripts/campaign/check_swaps.py).
#   delta-soak       SOAK_SECONDS (3600) of calls (2 clients, a pause of
#                    SOAK_PAUSE_SECONDS between their runs) with a delta every
#                    SOAK_DELTA_GAP_SECONDS (60) and a full build every 20th:
#                    the server's RSS and open file descriptors sampled every
#                    10 s, first vs last 10 minutes compared; 0 client errors.
DELTA_KILLS=${DELTA_KILLS:-200}
DELTA_CALLS=${DELTA_CALLS:-1000000}
DELTA_SWAPS=${DELTA_SWAPS:-100}
FULL_SWAPS=${FULL_SWAPS:-2}
SOAK_SECONDS=${SOAK_SECONDS:-3600}
SOAK_DELTA_GAP_SECONDS=${SOAK_DELTA_GAP_SECONDS:-60}
SOAK_PAUSE_SECONDS=${SOAK_PAUSE_SECONDS:-1}

json_field() {  # json_field <key>: one field of the JSON object on stdin
  "$PY" -c "import json,sys; print(json.load(sys.stdin).get(sys.argv[1], ''))" "$1"
}

# delta_logs <dir> <n>: the base log (tiny, scale 5) and n delta chunks, each a
# tiny log of other impressions over the same users and items.
delta_logs() {
  "$GEN" --preset tiny --scale 5 --seed 3 --quiet --output "$1/base.csv"
  local i
  for i in $(seq 1 "$2"); do
    "$GEN" --preset tiny --seed $((1000 + i)) --quiet --output "$1/chunk-$i.csv"
  done
}

# base_of <root> <version>: the base a version's manifest names ("" = a full version).
base_of() {
  "$PY" -c "import json,sys; m=json.load(open(sys.argv[1])); print((m.get('delta') or {}).get('base_version', '') or m.get('base_version', ''))" \
    "$1/$2/MANIFEST.json" 2>/dev/null || true
}

# --------------------------------------------------------------------------
section_delta_kills() {
  local W=$WORK/delta-kills root
  rm -rf "$W" && mkdir -p "$W"
  root=$W/root
  delta_logs "$W" 8
  local common=(--snapshot-root "$root" --keep 3 --quiet --json --sketch-dim 8)
  "$BUILD" --input "$W/base.csv" "${common[@]}" --seed 1 >/dev/null
  local t0 total
  t0=$(now)
  "$BUILD" --input "$W/chunk-1.csv" --delta-of CURRENT "${common[@]}" --seed 1 >/dev/null
  total=$(elapsed "$t0")
  log "delta-kills: clean delta ${total}s; $DELTA_KILLS killed runs (every 20th a full build)"
  local killed=0 finished=0 half=0 bad_current=0 lost_base=0 verified=0 full_runs=0 delta_runs=0
  declare -A seen=()
  local i
  for i in $(seq 1 "$DELTA_KILLS"); do
    local delay k args
    k=$((i % 8 + 1))
    if ((i % 20 == 0)); then
      full_runs=$((full_runs + 1))
      args=(--input "$W/base.csv,$W/chunk-$k.csv")
    else
      delta_runs=$((delta_runs + 1))
      args=(--input "$(seq -f "$W/chunk-%g.csv" 1 "$k" | paste -sd,)" --delta-of CURRENT)
    fi
    delay=$(rand_between "$("$PY" -c "print($total * 0.1)")" "$("$PY" -c "print($total * 1.2)")")
    kill_run delta-kills "$i" "$delay" "$BUILD" "${args[@]}" "${common[@]}" --seed 1
    local d name base
    for d in "$root"/*; do
      name=$(basename "$d")
      [[ $name == [0-9]*T*Z-* && $name != *.* ]] || continue
      base=$(base_of "$root" "$name")
      if [[ -n $base && ! -d $root/$base ]]; then
        lost_base=$((lost_base + 1)); log "run $i: delta $name is visible but its base $base is gone"
      fi
      if [[ -z ${seen[$name]:-} ]]; then
        seen[$name]=1
        if verify "$d"; then verified=$((verified + 1)); else
          half=$((half + 1)); log "run $i: visible version $name does not verify: $(cat "$WORK/verify.err")"
        fi
      fi
    done
  done
  "$BUILD" --input "$W/chunk-1.csv" --delta-of CURRENT "${common[@]}" --seed 1 >/dev/null
  local leftovers
  leftovers=$(find "$root" -maxdepth 1 \( -name '*.tmp' -o -name '*.deleting' \) | wc -l)
  result "delta-kills: $DELTA_KILLS runs ($delta_runs deltas, $full_runs full), $killed SIGKILLed" \
    "mid-run, $finished finished first; CURRENT failed to verify after $bad_current;" \
    "half/unverifiable visible versions: $half (of $verified distinct visible versions verified);" \
    "visible deltas without their base (counted after each run): $lost_base; leftovers after the next clean delta: $leftovers"
  check $((bad_current + half + lost_base + leftovers)) "delta-kills"
}

# --------------------------------------------------------------------------
section_delta_retention() {
  local W=$WORK/delta-retention root
  rm -rf "$W" && mkdir -p "$W"
  root=$W/root
  delta_logs "$W" 6
  local common=(--snapshot-root "$root" --quiet --json --sketch-dim 8 --seed 1)
  local base delta port bad=0
  base=$("$BUILD" --input "$W/base.csv" "${common[@]}" --keep 1 | json_field version)
  # Retention with --keep 1 over 5 deltas: the base of the kept delta stays.
  local i kept_base=0
  for i in 1 2 3 4 5; do
    delta=$("$BUILD" --input "$(seq -f "$W/chunk-%g.csv" 1 "$i" | paste -sd,)" --delta-of CURRENT \
      "${common[@]}" --keep 1 | json_field version)
    [[ -d $root/$base ]] && kept_base=$((kept_base + 1))
  done
  [[ $kept_base -eq 5 ]] || { bad=$((bad + 1)); log "delta-retention: --keep 1 deleted the base of a kept delta"; }
  port=$(free_port)
  SERVING_LINES=0
  : >"$W/server.log"
  start_server "$root" "$port" "$W/server.log"
  printf 'user_id,item_id\n' >"$W/pairs.csv"
  cut -d, -f1,2 "$W/chunk-1.csv" | tail -n +2 | sort -u | awk 'NR <= 200' >>"$W/pairs.csv"
  "$CLI" rates --server "127.0.0.1:$port" --input "$W/pairs.csv" --output "$W/before.csv" --with-version 2>/dev/null
  # The base goes as a retention run removes a version: renamed, then deleted.
  mv "$root/$base" "$root/$base.deleting" && rm -rf "$root/$base.deleting"
  sleep 1  # several refresher polls over CURRENT (still the delta)
  local after_ok=0 same=0
  "$CLI" rates --server "127.0.0.1:$port" --input "$W/pairs.csv" --output "$W/after.csv" --with-version \
    2>"$W/after.err" || after_ok=$?
  cmp -s "$W/before.csv" "$W/after.csv" || same=1
  local served
  served=$(served_version "$port")
  # The next delta over CURRENT: refused naming the base.
  local status=0
  "$BUILD" --input "$W/chunk-6.csv" --delta-of CURRENT "${common[@]}" --keep 1 >"$W/next.out" 2>"$W/next.err" || status=$?
  local refused=0
  [[ $status -ne 0 ]] && grep -q "$base" "$W/next.err" && refused=1
  local current_after
  current_after=$(cat "$root/CURRENT")
  # A full build recovers; the server adopts it.
  local full
  full=$("$BUILD" --input "$W/base.csv" "${common[@]}" --keep 1 | json_field version)
  local adopted=0
  for _ in $(seq 1 100); do
    [[ $(served_version "$port") == "$full" ]] && { adopted=1; break; }
    sleep 0.1
  done
  stop_server
  result "delta-retention: --keep 1 over 5 deltas kept their base $kept_base/5 times;" \
    "base $base deleted while the server served it + delta $delta: calls after it exit $after_ok," \
    "answers identical to before: $([[ $same -eq 0 ]] && echo yes || echo NO), server still serves" \
    "$served; next --delta_of CURRENT exit $status: $(grep -v "nothing published" "$W/next.err" | tail -1 | sed "s|$root/||g" | head -c 300)" \
    "(names the base: $([[ $refused -eq 1 ]] && echo yes || echo NO)); CURRENT unchanged:" \
    "$([[ $current_after == "$delta" ]] && echo yes || echo NO); a full build then adopted: $adopted"
  [[ $after_ok -eq 0 && $same -eq 0 && $served == "$delta" && $refused -eq 1 &&
    $current_after == "$delta" && $adopted -eq 1 ]] || bad=$((bad + 1))
  check "$bad" "delta-retention"
}

# --------------------------------------------------------------------------
section_delta_corruption() {
  local rc=0
  local W=$WORK/delta-corruption root
  rm -rf "$W" && mkdir -p "$W"
  root=$W/root
  delta_logs "$W" 2
  local common=(--snapshot-root "$root" --quiet --json --sketch-dim 8 --seed 1)
  "$BUILD" --input "$W/base.csv" "${common[@]}" >/dev/null
  "$BUILD" --input "$W/chunk-1.csv" --delta-of CURRENT "${common[@]}" >/dev/null
  # The template: a second delta (its copies are deltas over the same base);
  # the good version served throughout: the first delta.
  local previous template
  previous=$(cat "$root/CURRENT")
  template=$("$BUILD" --input "$W/chunk-1.csv,$W/chunk-2.csv" --delta-of CURRENT "${common[@]}" | json_field version)
  mv "$root/$template" "$W/template"
  printf '%s\n' "$previous" >"$root/CURRENT.tmp" && mv "$root/CURRENT.tmp" "$root/CURRENT"
  local port
  port=$(free_port)
  SERVING_LINES=0
  : >"$W/server.log"
  start_server "$root" "$port" "$W/server.log"
  "$PY" "$REPO/scripts/campaign/corrupt.py" --template "$W/template" --root "$root" \
    --good "$previous" --port "$port" --cli "$CLI" --server-log "$W/server.log" \
    --flips-per-file "${FLIPS_PER_FILE:-3}" | sed 's/^RESULT corruption/RESULT delta-corruption/' || rc=$?
  check "${rc:-0}" "delta-corruption"
  stop_server
}

# --------------------------------------------------------------------------
# The rates one whole-file call gets from the server now (one version):
# <out dir>/<version>.csv. Waits until the server serves `version`.
reference_rates() {  # reference_rates <port> <pairs> <out dir> <version>
  local i
  for i in $(seq 1 300); do
    [[ $(served_version "$1") == "$4" ]] && break
    sleep 0.1
  done
  "$CLI" rates --server "127.0.0.1:$1" --input "$2" --output "$3/ref.csv" --with-version \
    --max-batch-pairs 100000 2>/dev/null
  local answered
  answered=$(sed -n 2p "$3/ref.csv" | awk -F, '{print $NF}')
  [[ $answered == "$4" ]] || { log "reference for $4 answered by '$answered'"; return 1; }
  mv "$3/ref.csv" "$3/$4.csv"
}

section_delta_swaps() {
  local rc=0
  local W=$WORK/delta-swaps root
  rm -rf "$W" && mkdir -p "$W/exports" "$W/out"
  root=$W/root
  delta_logs "$W" 10
  local common=(--snapshot-root "$root" --quiet --json --sketch-dim 8 --seed 1 --keep 1000)
  # Each full build another alpha (so other rates); a delta takes its base's.
  local alpha=0.15
  "$BUILD" --input "$W/base.csv" "${common[@]}" --alpha "$alpha" >/dev/null
  printf 'user_id,item_id\n' >"$W/pairs.csv"
  cat "$W"/chunk-*.csv "$W/base.csv" | grep -v '^user_id' | cut -d, -f1,2 | sort -u |
    "$PY" -c "import random,sys; l=sys.stdin.read().split(); random.Random(5).shuffle(l); print('\n'.join(l[:2000]))" >>"$W/pairs.csv"
  local pairs_rows port
  pairs_rows=$(($(wc -l <"$W/pairs.csv") - 1))
  port=$(free_port)
  SERVING_LINES=0
  : >"$W/server.log"
  start_server "$root" "$port" "$W/server.log"
  reference_rates "$port" "$W/pairs.csv" "$W/exports" "$(cat "$root/CURRENT")" || check 1 "delta-swaps: reference"
  local per_run=$(((pairs_rows + 3) / 4)) runs
  runs=$(((DELTA_CALLS + per_run - 1) / per_run))
  log "delta-swaps: $pairs_rows pairs, $per_run calls per run, $runs runs over 2 clients," \
    "$DELTA_SWAPS deltas + $FULL_SWAPS full builds"
  local t0
  t0=$(now)
  local c
  for c in 0 1; do
    # Until both the calls are made and every publish is done (the clients
    # stop when $W/published appears).
    (
      r=$c
      while [[ $r -lt $runs || ! -e $W/published ]]; do
        "$CLI" rates --server "127.0.0.1:$port" --input "$W/pairs.csv" --output "$W/out/$r.csv" \
          --max-batch-pairs 4 --with-version --max-attempts 1 2>"$W/out/$r.err" || echo "run $r exit $?" >>"$W/failed"
        grep -qi error "$W/out/$r.err" || rm -f "$W/out/$r.err"
        r=$((r + 2))
      done
    ) &
    eval "c$c=\$!"
  done
  # Publishes spread over the clients' run: a delta (cumulative chunks since
  # the base) or, at evenly spaced points, a full build; each is waited for
  # until served, and its reference rates taken.
  local k=0 deltas=0 fulls=0 since_base=0 v every
  every=$(((DELTA_SWAPS + FULL_SWAPS) / (FULL_SWAPS + 1)))
  local gap=${DELTA_SWAP_GAP_SECONDS:-0.5}
  while kill -0 "$c0" 2>/dev/null || kill -0 "$c1" 2>/dev/null; do
    if [[ $deltas -lt $DELTA_SWAPS || $fulls -lt $FULL_SWAPS ]]; then
      k=$((k + 1))
      if [[ $fulls -lt $FULL_SWAPS && $((k % every)) -eq 0 ]]; then
        alpha=0.$((16 + fulls))
        v=$("$BUILD" --input "$W/base.csv,$W/chunk-$((k % 10 + 1)).csv" "${common[@]}" --alpha "$alpha" | json_field version)
        fulls=$((fulls + 1)) since_base=0
      else
        since_base=$((since_base % 10 + 1))
        v=$("$BUILD" --input "$(seq -f "$W/chunk-%g.csv" 1 "$since_base" | paste -sd,)" --delta-of CURRENT \
          "${common[@]}" --alpha "$alpha" | json_field version)
        deltas=$((deltas + 1))
      fi
      reference_rates "$port" "$W/pairs.csv" "$W/exports" "$v" || check 1 "delta-swaps: reference of $v"
      sleep "$gap"
    else
      touch "$W/published"
      sleep 1
    fi
  done
  wait "$c0" "$c1" || true
  local seconds
  seconds=$(elapsed "$t0")
  stop_server
  local adopted
  adopted=$(grep -c "serving version" "$W/server.log")
  log "delta-swaps: published $deltas deltas and $fulls full versions"
  "$PY" "$REPO/scripts/campaign/check_swaps.py" --exports "$W/exports" --outputs "$W/out" \
    --batch 4 --seconds "$seconds" --published $((deltas + fulls)) --adopted "$adopted" \
    --failed-file "$W/failed" | sed 's/^RESULT swaps/RESULT delta-swaps/' || rc=$?
  result "delta-swaps: $deltas delta swaps and $fulls full swaps published and adopted during the calls"
  [[ $deltas -ge $DELTA_SWAPS && $fulls -ge $FULL_SWAPS ]] || { log "fewer swaps than asked"; rc=1; }
  check "${rc:-0}" "delta-swaps"
  rm -rf "$W/out"
}

# --------------------------------------------------------------------------
section_delta_soak() {
  local W=$WORK/delta-soak root
  rm -rf "$W" && mkdir -p "$W/out"
  root=$W/root
  delta_logs "$W" 20
  local common=(--snapshot-root "$root" --quiet --json --sketch-dim 8 --seed 1 --keep 5)
  "$BUILD" --input "$W/base.csv" "${common[@]}" >/dev/null
  printf 'user_id,item_id\n' >"$W/pairs.csv"
  cat "$W"/chunk-*.csv | grep -v '^user_id' | cut -d, -f1,2 | sort -u | awk 'NR <= 2000' >>"$W/pairs.csv"
  local port
  port=$(free_port)
  SERVING_LINES=0
  : >"$W/server.log"
  start_server "$root" "$port" "$W/server.log"
  local server_pid=$SERVER_PID t0 stop_at
  t0=$(date +%s)
  stop_at=$((t0 + SOAK_SECONDS))
  # Calls: 2 clients, runs of the pairs file in calls of 4 pairs, a pause
  # between runs; each run's output checked for calls answered by two
  # versions, then removed.
  local c
  for c in 0 1; do
    (
      r=0
      while [[ $(date +%s) -lt $stop_at ]]; do
        r=$((r + 1))
        if "$CLI" rates --server "127.0.0.1:$port" --input "$W/pairs.csv" --output "$W/out/$c.csv" \
          --max-batch-pairs 4 --with-version --max-attempts 1 2>"$W/out/$c.err"; then
          "$PY" -c "
import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
calls=[rows[i:i+4] for i in range(0,len(rows),4)]
mixed=sum(1 for b in calls if len({r['snapshot_version'] for r in b})>1 or any('+' in r['snapshot_version'] for r in b))
print(len(calls), mixed)" "$W/out/$c.csv" >>"$W/calls-$c"
        else
          echo "client $c run $r: $(tail -1 "$W/out/$c.err")" >>"$W/failed"
        fi
        sleep "$SOAK_PAUSE_SECONDS"
      done
    ) &
    eval "c$c=\$!"
  done
  # Samples of the server's RSS and open descriptors every 10 s.
  (
    while [[ $(date +%s) -lt $stop_at ]] && kill -0 "$server_pid" 2>/dev/null; do
      printf '%s %s %s\n' "$(($(date +%s) - t0))" \
        "$(awk '/^VmRSS/ {print $2}' "/proc/$server_pid/status")" \
        "$(ls "/proc/$server_pid/fd" | wc -l)" >>"$W/samples"
      sleep 10
    done
  ) &
  local sampler=$!
  # A delta every SOAK_DELTA_GAP_SECONDS (cumulative chunks since the base),
  # every 20th a full build.
  local k=0 deltas=0 fulls=0 since_base=0 build_failures=0 next
  next=$(($(date +%s) + SOAK_DELTA_GAP_SECONDS))
  while [[ $(date +%s) -lt $stop_at ]]; do
    if [[ $(date +%s) -ge $next ]]; then
      k=$((k + 1))
      next=$((next + SOAK_DELTA_GAP_SECONDS))
      if ((k % 20 == 0)); then
        "$BUILD" --input "$W/base.csv,$W/chunk-$((k % 20 + 1)).csv" "${common[@]}" >/dev/null 2>>"$W/build.err" &&
          fulls=$((fulls + 1)) || build_failures=$((build_failures + 1))
        since_base=0
      else
        since_base=$((since_base % 19 + 1))
        "$BUILD" --input "$(seq -f "$W/chunk-%g.csv" 1 "$since_base" | paste -sd,)" --delta-of CURRENT \
          "${common[@]}" >/dev/null 2>>"$W/build.err" && deltas=$((deltas + 1)) || build_failures=$((build_failures + 1))
      fi
    fi
    sleep 1
  done
  wait "$c0" "$c1" "$sampler" || true
  local adopted rejected
  adopted=$(grep -c "serving version" "$W/server.log")
  rejected=$(grep -c "failed to load" "$W/server.log" || true)
  stop_server
  local calls mixed failed
  calls=$(cat "$W"/calls-* 2>/dev/null | awk '{s += $1} END {print s + 0}')
  mixed=$(cat "$W"/calls-* 2>/dev/null | awk '{s += $2} END {print s + 0}')
  failed=0
  [[ -f $W/failed ]] && failed=$(wc -l <"$W/failed")
  local flat=0
  "$PY" - "$W/samples" "$SOAK_SECONDS" <<'EOF' || flat=$?
import sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 3]
length = rows[-1][0] if rows else 0
window = min(600, length // 3)
first = [r for r in rows if r[0] < window]
last = [r for r in rows if r[0] > length - window]
def stats(rs, i):
    v = [r[i] for r in rs]
    return min(v), sum(v) / len(v), max(v)
f_rss, l_rss = stats(first, 1), stats(last, 1)
f_fd, l_fd = stats(first, 2), stats(last, 2)
print(f"RESULT delta-soak: {length} s sampled every 10 s ({len(rows)} samples); first and last "
      f"{window // 60} min: RSS min/mean/max {f_rss[0] / 1024:.1f}/{f_rss[1] / 1024:.1f}/{f_rss[2] / 1024:.1f} MiB"
      f" -> {l_rss[0] / 1024:.1f}/{l_rss[1] / 1024:.1f}/{l_rss[2] / 1024:.1f} MiB; open fds "
      f"{f_fd[0]}/{f_fd[1]:.1f}/{f_fd[2]} -> {l_fd[0]}/{l_fd[1]:.1f}/{l_fd[2]}")
# Flat: the last window's mean RSS within 10% of the first's, its fds within
# the first window's range plus 4 (a delta layered over its base opens two
# RocksDB instances; a full version one).
ok = l_rss[1] <= f_rss[1] * 1.10 and l_fd[2] <= f_fd[2] + 4
sys.exit(0 if ok else 1)
EOF
  result "delta-soak: $(($(date +%s) - t0)) s; $calls calls of 4 pairs by 2 clients; failed client" \
    "runs $failed; calls answered by two versions $mixed; $deltas deltas and $fulls full builds" \
    "published (build failures $build_failures), server adopted $adopted versions (incl. the first)," \
    "load failures $rejected; RSS and fds flat: $([[ $flat -eq 0 ]] && echo yes || echo NO)"
  check $((failed + mixed + build_failures + rejected + flat)) "delta-soak"
}
