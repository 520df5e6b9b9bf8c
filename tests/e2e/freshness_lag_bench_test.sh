#!/usr/bin/env bash
# bench/freshness_lag.sh end to end on a tiny churned log (a smoke test, no
# figure is judged): the delta CronJob's own command line
# (deploy/k8s/delta-cronjob.yaml, its rule from the base: --rule-from-base) run
# every 5 s against the real builder while a writer appends impressions, a
# real graphsieve-server adopting each delta. Fails when:
#   - the bench exits non-zero (a delta build failed, the server exited, or no
#     delta was served within its bound);
#   - fewer than 2 delta builds ran, or fewer than 2 versions were served after
#     the first delta;
#   - the lag, RSS or per-version profile lines are missing from the summary.
# Usage: freshness_lag_bench_test.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
SRC=$1; BIN=$2; WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

set +e
"$SRC/bench/freshness_lag.sh" --build "$BIN" --scale 0.02 --period 5 --periods 2 --poll 1 \
  --rows_per_second 50 --sample_seconds 1 --work "$WORK" >"$WORK/run.out" 2>"$WORK/run.err"
rc=$?
set -e
[[ $rc == 0 ]] && ok "the bench exits 0" || bad "the bench exited $rc: $(tail -5 "$WORK/run.err")"
builds=$(sed -n 's/^delta builds: \([0-9]*\);.*/\1/p' "$WORK/run.out")
[[ -n $builds ]] && ((builds >= 2)) && ok "$builds delta builds" || bad "delta builds: '$builds'"
served=$(sed -n 's/^  versions served in that time: \([0-9]*\)$/\1/p' "$WORK/run.out")
[[ -n $served ]] && ((served >= 2)) && ok "$served versions served" || bad "versions served: '$served'"
grep -Eq "^  max [0-9.]+ s +p50 [0-9.]+ s +p90 [0-9.]+ s +mean [0-9.]+ s$" "$WORK/run.out" \
  && ok "the lag's summary" || bad "no lag summary"
grep -Eq "^server RSS: on the base [0-9.]+ MiB .* = [0-9.]+x, at the end [0-9.]+ MiB = [0-9.]+x$" \
  "$WORK/run.out" && ok "the server's RSS on the base and after the deltas" || bad "no RSS line"
(($(grep -Ec "^  server profile of [0-9TZa-f-]+: [0-9,]+ pairs" "$WORK/run.out") >= 2)) \
  && ok "the server's profile of each version" || bad "no profile lines"
if [[ $fail == 0 ]]; then rm -rf "$WORK"; else cat "$WORK/run.out"; fi
exit $fail
