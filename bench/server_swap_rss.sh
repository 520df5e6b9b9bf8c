#!/usr/bin/env bash
# Anonymous RSS of graphsieve-server across many version swaps
# (docs/SERVER.md "Memory across many swaps").
#
#   bench/server_swap_rss.sh --root DIR [--flips 60] [--binary BIN] [--baseline_binary BIN]
#
# DIR must hold two published versions (e.g. two graphsieve-build runs into
# one root). The script serves a hard-linked copy of DIR (cp -al: CURRENT is
# replaced by rename, never written in place) with --poll-interval-seconds
# 0.5, flips CURRENT between the two versions, waits after each flip until the
# server logged "profiled <version>" (the swap and the version profiler's scan
# are done), and reads Anonymous from /proc/PID/smaps_rollup. No client load.
# Prints the anonymous RSS after 0, 1, 10, 30, 60, ... flips for each binary
# (the baseline, when given, runs right after), with wall and CPU seconds.
set -euo pipefail

root="" flips=60 binary="" baseline=""
here=$(cd "$(dirname "$0")/.." && pwd)
binary="$here/build-ci/server/graphsieve-server"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --root) root=$2; shift 2 ;;
    --flips) flips=$2; shift 2 ;;
    --binary) binary=$2; shift 2 ;;
    --baseline_binary) baseline=$2; shift 2 ;;
    *) echo "server_swap_rss.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n "$root" ]] || { echo "server_swap_rss.sh: --root DIR is required" >&2; exit 2; }
[[ "$flips" =~ ^[1-9][0-9]*$ ]] || { echo "server_swap_rss.sh: --flips '$flips' is not a positive integer" >&2; exit 2; }
mapfile -t versions < <(find "$root" -mindepth 1 -maxdepth 1 -type d -name '[0-9]*T*Z-*' -printf '%f\n' | sort)
if [[ ${#versions[@]} -lt 2 ]]; then
  echo "server_swap_rss.sh: $root holds ${#versions[@]} published version(s); two are needed" >&2
  exit 2
fi
v1=${versions[0]} v2=${versions[1]}

# run BIN LABEL: prints "LABEL flips anon_mib" lines, then a CPU line.
run() {
  local bin=$1 label=$2 work log pid
  [[ -x "$bin" ]] || { echo "server_swap_rss.sh: $bin is not an executable" >&2; exit 2; }
  work=$(mktemp -d /tmp/server-swap-rss.XXXXXX)
  cp -al "$root" "$work/root"
  rm -rf "$work/root/holds" "$work/root/pins" "$work/root/LOCK"
  printf '%s' "$v1" > "$work/root/CURRENT.tmp" && mv "$work/root/CURRENT.tmp" "$work/root/CURRENT"
  log="$work/server.log"
  "$bin" --snapshot_root "$work/root" --port 0 --admin_port -1 --poll_interval_seconds 0.5 \
    > "$log" 2>&1 &
  pid=$!
  local start=$SECONDS
  wait_profiled() {  # until the log has $1 "profiled" lines (120 s each at most)
    local i
    for ((i = 0; i < 1200; ++i)); do
      [[ $(grep -c "profiled " "$log" || true) -ge $1 ]] && return 0
      kill -0 "$pid" 2>/dev/null || { echo "server exited; log:" >&2; cat "$log" >&2; exit 1; }
      sleep 0.1
    done
    echo "server_swap_rss.sh: no 'profiled' line $1 within 120 s; log: $log" >&2
    exit 1
  }
  anon() { awk '/^Anonymous:/ { printf "%.1f", $2 / 1024 }' "/proc/$pid/smaps_rollup"; }
  wait_profiled 1
  echo "$label 0 $(anon)"
  local f
  for ((f = 1; f <= flips; ++f)); do
    local v=$v2
    ((f % 2 == 0)) && v=$v1
    printf '%s' "$v" > "$work/root/CURRENT.tmp" && mv "$work/root/CURRENT.tmp" "$work/root/CURRENT"
    wait_profiled $((f + 1))
    echo "$label $f $(anon)"
  done
  local ticks
  ticks=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
  echo "$label cpu $(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t / hz }') wall $((SECONDS - start))"
  kill "$pid"; wait "$pid" || true
  rm -rf "$work"
}

out=$(mktemp)
run "$binary" this | tee -a "$out"
[[ -n "$baseline" ]] && run "$baseline" baseline | tee -a "$out"
echo
echo "anonymous RSS (MiB) after N flips of $root ($v1 <-> $v2), no client load"
awk -v flips="$flips" '
  $2 == "cpu" { cpu[$1] = $3; wall[$1] = $5; next }
  { a[$1, $2] = $3; labels[$1] = 1 }
  END {
    n = split("0 1 10 30 60 100 150", cols, " ")
    line = "| binary |"; sep = "| --- |"
    for (i = 1; i <= n; ++i) if (cols[i] <= flips) { line = line " " cols[i] " |"; sep = sep " --- |" }
    print line " " flips "/1 | server CPU s / wall s |"; print sep " --- | --- |"
    for (l in labels) {
      row = "| " l " |"
      for (i = 1; i <= n; ++i) if (cols[i] <= flips) row = row " " a[l, cols[i]] " |"
      printf "%s %.2fx | %s / %s |\n", row, a[l, flips] / a[l, 1], cpu[l], wall[l]
    }
  }' "$out"
rm -f "$out"
