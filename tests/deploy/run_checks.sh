#!/usr/bin/env bash
# Offline checks of deploy/ (CTest deploy_checks, run by .ci/run through scripts/test.sh):
#   - kubectl kustomize deploy/k8s renders; every object validates against the Kubernetes
#     API schemas, has no unknown field, and follows the deployment rules
#     (tests/deploy/check_manifests.mjs; its self-test breaks the objects one way at a time);
#   - Prometheus: promtool check rules, promtool test rules (alert unit tests), promtool
#     check config on the local config as it is and on the Kubernetes config with its
#     service discovery swapped for static targets; amtool check-config on Alertmanager's;
#   - Grafana: every PromQL expression of the dashboard parses (promtool check rules);
#     a broken expression is rejected (the check can fail).
# Tools: kubectl (kustomize), node + tests/deploy/node_modules (npm ci by
# scripts/install-deps.sh, versions from package-lock.json), promtool (Debian's
# prometheus), amtool (prometheus-alertmanager). No network.
# Usage: run_checks.sh BUILD_DIR WORK_DIR
set -uo pipefail
BIN=$1; WORK=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tests/deploy
rm -rf "$WORK"; mkdir -p "$WORK"
passed=0; failed=0

check() {  # check NAME COMMAND...: runs it, prints its output on failure
  local name=$1; shift
  local t0=$(date +%s%N)
  if "$@" >"$WORK/out.txt" 2>&1; then
    local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    passed=$((passed + 1)); printf 'ok   %-60s %6d ms\n' "$name" "$ms"
  else
    failed=$((failed + 1)); echo "FAIL $name"; sed 's/^/     /' "$WORK/out.txt"
  fi
}
expect_failure() { ! "$@"; }

for tool in kubectl node promtool amtool; do
  command -v $tool >/dev/null || { echo "FAIL: $tool not found (scripts/install-deps.sh installs it)"; exit 1; }
done
[[ -d "$HERE/node_modules/kubernetes-models" ]] \
  || { echo "FAIL: $HERE/node_modules missing (scripts/install-deps.sh runs npm ci there)"; exit 1; }

"$BIN/server/graphsieve-server" --help >"$WORK/server-help.txt" 2>&1
"$BIN/builder/graphsieve-build" --help >"$WORK/build-help.txt" 2>&1
"$BIN/eval/graphsieve-eval" tune --help >"$WORK/eval-help.txt" 2>&1
"$BIN/client/graphsieve" canary --help >"$WORK/cli-help.txt" 2>&1
INPUTS=("$WORK/rendered.yaml" "$ROOT/docker/Dockerfile" "$WORK/server-help.txt" "$WORK/build-help.txt"
        "$WORK/eval-help.txt" "$WORK/cli-help.txt")

check "kubectl kustomize deploy/k8s renders" \
  bash -c "kubectl kustomize '$ROOT/deploy/k8s' >'$WORK/rendered.yaml'"
check "objects: API schemas, no unknown field, deploy rules" \
  node "$HERE/check_manifests.mjs" manifests "${INPUTS[@]}"
check "objects: each broken manifest is reported (self-test)" \
  node "$HERE/check_manifests.mjs" self-test "${INPUTS[@]}"

P=$ROOT/deploy/prometheus
check "promtool check rules graphsieve-alerts.yml" promtool check rules "$P/graphsieve-alerts.yml"
check "promtool test rules graphsieve-alerts.test.yml" promtool test rules "$P/graphsieve-alerts.test.yml"
check "promtool check config prometheus-local.yml" promtool check config "$P/prometheus-local.yml"
mkdir -p "$WORK/k8s-prometheus"
cp "$P/graphsieve-alerts.yml" "$WORK/k8s-prometheus/"
check "prometheus.yml: kubernetes_sd_configs blocks" \
  node "$HERE/check_manifests.mjs" prometheus-sd "$P/prometheus.yml" "$WORK/k8s-prometheus/prometheus.yml"
check "promtool check config prometheus.yml (SD swapped for static)" \
  promtool check config "$WORK/k8s-prometheus/prometheus.yml"
check "amtool check-config alertmanager.yml" amtool check-config "$P/alertmanager.yml"

check "grafana: extract the PromQL expressions" \
  node "$HERE/check_manifests.mjs" grafana "$ROOT/deploy/grafana/graphsieve-dashboard.json" "$WORK/grafana-rules.yml"
check "grafana: every expression parses (promtool check rules)" promtool check rules "$WORK/grafana-rules.yml"
printf 'groups:\n- name: broken\n  rules:\n  - record: broken\n    expr: sum(rate(graphsieve_pairs_total[1m])\n' >"$WORK/broken-rules.yml"
check "a broken PromQL expression is rejected" expect_failure promtool check rules "$WORK/broken-rules.yml"

echo "deploy checks: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
