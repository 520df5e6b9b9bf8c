#!/usr/bin/env bash
# graphsieve-bench-server end to end on a tiny snapshot (a smoke test, no
# figure is judged): the real server and the trivial service over loopback
# gRPC, the ceiling comparison and the handler's time read from the server's
# /metrics, with --pin_cpus putting the client and the services on CPUs of
# their own:
#   - a malformed --pin_cpus exits 2 naming the flag;
#   - the run exits 0; the server and the trivial service run on the server's
#     CPUs and the client on its own, as /proc says;
#   - the ceiling table has EXACT, INFERRED and mixed at 1 and 4 calls in
#     flight, each with a share, and the handler table a handler time (not
#     n/a) for each;
#   - the server drains without waiting for its deadline: the bench closes its
#     connections before SIGTERM, so none is left unanswered ("drained:");
#   - with a second version, --evict_page_cache prints both versions' resident
#     bytes and the swap under load counts its calls: 0 errors, every answer
#     from one of the two versions.
# Usage: bench_server_smoke_test.sh BUILD_DIR WORK_DIR
set -euo pipefail
BIN=$1; WORK=$2
BENCH=$BIN/bench/graphsieve-bench-server
rm -rf "$WORK"; mkdir -p "$WORK"
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

"$BIN/gen/graphsieve-gen" --preset tiny --seed 3 --output "$WORK/log.csv" --quiet
"$BIN/builder/graphsieve-build" --input "$WORK/log.csv" --snapshot-root "$WORK/snap" --quiet

set +e
"$BENCH" --snapshot_root "$WORK/snap" --pin_cpus=0 >"$WORK/bad.out" 2>"$WORK/bad.err"
rc=$?
set -e
[[ $rc == 2 ]] && grep -q -- "--pin_cpus=0: expected CLIENT:SERVER" "$WORK/bad.err" \
  && ok "a malformed --pin_cpus exits 2 naming the flag" \
  || bad "--pin_cpus=0 gave exit $rc: $(cat "$WORK/bad.err")"

# The first two CPUs this process may use (one CPU: both sides on it).
read -r CLIENT SERVER < <(python3 -c '
import os
cpus = sorted(os.sched_getaffinity(0))
print(cpus[0], cpus[1] if len(cpus) > 1 else cpus[0])')

set +e
"$BENCH" --snapshot_root "$WORK/snap" --raw=false --throughput=false --batches 64 \
  --seconds 0.4 --ceiling_rounds 1 --ceiling_batch 64 --swap_version=none \
  --pin_cpus="$CLIENT:$SERVER" >"$WORK/run.out" 2>"$WORK/run.err"
rc=$?
set -e
[[ $rc == 0 ]] && ok "the bench exits 0" || bad "the bench exited $rc: $(tail -5 "$WORK/run.err")"
grep -q "^server pid [0-9]* on CPUs $SERVER, this client on CPUs $CLIENT\$" "$WORK/run.out" \
  && ok "the server runs on CPU $SERVER, the client on CPU $CLIENT" \
  || bad "server/client CPUs not as pinned: $(grep -E 'CPUs' "$WORK/run.out")"
grep -q "^trivial service pid [0-9]* on CPUs $SERVER\$" "$WORK/run.out" \
  && ok "the trivial service runs on CPU $SERVER" \
  || bad "trivial service CPUs not as pinned: $(grep -E 'trivial service pid' "$WORK/run.out")"
for pool in EXACT INFERRED mixed; do
  for inflight in 1 4; do
    # pairs, in flight, trivial pairs/s, server pairs/s, share, trivial p99 ms, server p99 ms
    grep -Eq "^$pool +$inflight +[0-9]+ +[0-9]+ +[0-9]+% +[0-9.]+ ms +[0-9.]+ ms\$" "$WORK/run.out" \
      && ok "ceiling row $pool at $inflight in flight" \
      || bad "no ceiling row for $pool at $inflight in flight"
    # pairs, in flight, trivial call, server call, in handler, outside handler (µs)
    grep -Eq "^$pool +$inflight +[0-9.]+ +[0-9.]+ +[0-9.]+ +-?[0-9.]+\$" "$WORK/run.out" \
      && ok "handler time for $pool at $inflight in flight" \
      || bad "no handler time for $pool at $inflight in flight (n/a: /metrics not read)"
  done
done
grep -q "^server exited with 0\$" "$WORK/run.out" && ok "the server exited 0" \
  || bad "the server's exit: $(grep 'server exited' "$WORK/run.out")"
grep -q "graphsieve-server: stopped" "$WORK/run.err" && ! grep -q "drained:" "$WORK/run.err" \
  && ok "the server drained without waiting for idle connections" \
  || bad "the drain: $(grep -E 'drain|stopped' "$WORK/run.err")"

# A swap under load with the page cache dropped first: a second version in
# the root, the load's calls counted by the version that answered.
"$BIN/builder/graphsieve-build" --input "$WORK/log.csv" --snapshot-root "$WORK/snap" --seed 2 \
  --quiet
set +e
"$BENCH" --snapshot_root "$WORK/snap" --raw=false --throughput=false --ceiling=false \
  --evict_page_cache >"$WORK/swap.out" 2>"$WORK/swap.err"
rc=$?
set -e
[[ $rc == 0 ]] && ok "the swap run exits 0" || bad "the swap run exited $rc: $(tail -5 "$WORK/swap.err")"
[[ $(grep -Ec "^page cache of [0-9TZa-f-]+ \(.*\): [0-9]+ files, [0-9.]+ MiB; resident before eviction [0-9.]+ MiB, after [0-9.]+ MiB\$" "$WORK/swap.out") == 2 ]] \
  && ok "both versions' files evicted, resident bytes printed" \
  || bad "eviction lines: $(grep 'page cache' "$WORK/swap.out")"
grep -Eq "^calls during the swap .*: [1-9][0-9]*, errors 0; answered by [0-9TZa-f-]+ [0-9]+, by [0-9TZa-f-]+ [0-9]+, by another version 0; slowest call [0-9.]+ ms\$" "$WORK/swap.out" \
  && ok "the swap's load counted, 0 errors, every answer from one of the two versions" \
  || bad "the swap's calls: $(grep -E 'calls during|swap' "$WORK/swap.out")"

if [[ $fail == 0 ]]; then rm -rf "$WORK"; fi
exit $fail
