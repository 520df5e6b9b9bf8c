#!/usr/bin/env bash
# Operator actions are authorised: the real graphsieve-server and the real CLI.
#   - PinVersion through the data port is refused (PERMISSION_DENIED), the CLI
#     exits 2 naming the operator address, and nothing changes: same active
#     version, no pin, nothing written under <root>/pins/;
#   - the same pin through the operator listener (a unix socket here) works:
#     the version serves, is pinned, and <root>/pins/<version> exists; unpin too;
#   - an operator listener on a non-loopback address is refused at start (exit 2);
#   - the admin HTTP binds 127.0.0.1 by default (the listening socket, read with ss).
# Usage: operator_auth_test.sh BUILD_DIR WORK_DIR
set -euo pipefail
BIN=$1; WORK=$2
CLI=$BIN/client/graphsieve
rm -rf "$WORK"; mkdir -p "$WORK"
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

"$BIN/gen/graphsieve-gen" --preset tiny --seed 5 --output "$WORK/log.csv" --quiet
"$BIN/builder/graphsieve-build" --input "$WORK/log.csv" --snapshot-root "$WORK/snap" --alpha 0.2 --quiet
V1=$(cat "$WORK/snap/CURRENT")
"$BIN/builder/graphsieve-build" --input "$WORK/log.csv" --snapshot-root "$WORK/snap" --alpha 0.1 --quiet
V2=$(cat "$WORK/snap/CURRENT")
[[ "$V1" != "$V2" ]] || { echo "FAIL: the two builds got one version id"; exit 1; }

SOCK=$WORK/operator.sock
"$BIN/server/graphsieve-server" --snapshot-root "$WORK/snap" --host 127.0.0.1 --port 0 \
  --admin-port 0 --operator-address "unix:$SOCK" \
  --poll-interval-seconds 0 >"$WORK/server.out" 2>"$WORK/server.err" &
PID=$!
trap 'kill -TERM $PID 2>/dev/null || true; wait $PID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  grep -q "listening" "$WORK/server.out" 2>/dev/null && break
  kill -0 $PID 2>/dev/null || { cat "$WORK/server.err"; echo "FAIL: server died"; exit 1; }
  sleep 0.1
done
PORT=$(sed -n 's/.* port=\([0-9]*\).*/\1/p' "$WORK/server.out" | head -1)
ADMIN=$(sed -n 's/.*admin_port=\([0-9]*\).*/\1/p' "$WORK/server.out" | head -1)
[[ -n "$PORT" && -n "$ADMIN" ]] || { cat "$WORK/server.out"; echo "FAIL: no ports"; exit 1; }
grep -q "operator=unix:$SOCK" "$WORK/server.out" && ok "the operator address is printed" \
  || bad "no operator=unix:$SOCK in: $(cat "$WORK/server.out")"
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$ADMIN/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done

# What PinVersion can change: active version, pin, rejections, refresh history length.
state() {
  "$CLI" status --server "127.0.0.1:$PORT" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d.get("active", {}).get("version", "-"), "pinned=" + d.get("pinned_version", ""),
      "rejected=" + ",".join(d.get("rejected_versions", [])),
      "history=%d" % len(d.get("refresh_history", [])))'
}
before=$(state)
[[ "$before" == "$V2 pinned= rejected= "* ]] && ok "serving $V2 (CURRENT) before the pins" \
  || bad "not serving $V2 unpinned before the pins: $before"

# 1. Unauthorised: the data port.
rc=0; "$CLI" pin --server "127.0.0.1:$PORT" --version "$V1" >"$WORK/pin-data.out" 2>&1 || rc=$?
[[ $rc -eq 2 ]] && ok "pin through the data port exits 2" || bad "pin through the data port exited $rc"
grep -q "PERMISSION_DENIED" "$WORK/pin-data.out" && ok "refused with PERMISSION_DENIED" \
  || bad "no PERMISSION_DENIED in: $(cat "$WORK/pin-data.out")"
grep -q -- "--operator-address" "$WORK/pin-data.out" && ok "the refusal names --operator-address" \
  || bad "the refusal does not say where to pin: $(cat "$WORK/pin-data.out")"
after=$(state)
[[ "$after" == "$before" ]] && ok "status unchanged by the refused pin" \
  || bad "status changed by a refused pin: before $before after $after"
[[ ! -e "$WORK/snap/pins/$V1" ]] && ok "no pin file written" || bad "a refused pin wrote pins/$V1"

# 2. Authorised: the operator socket.
"$CLI" pin --server "unix:$SOCK" --version "$V1" >"$WORK/pin-op.out" 2>&1 \
  && ok "pin through the operator socket succeeds" || bad "operator pin failed: $(cat "$WORK/pin-op.out")"
grep -q "pinned version *$V1" "$WORK/pin-op.out" && ok "the CLI reports $V1 pinned" \
  || bad "unexpected pin output: $(cat "$WORK/pin-op.out")"
pinned=$(state)
[[ "$pinned" == "$V1 pinned=$V1 "* ]] \
  && ok "status: $V1 active and pinned" || bad "status after the operator pin: $pinned"
[[ -e "$WORK/snap/pins/$V1" ]] && ok "pins/$V1 written (retention keeps it)" || bad "no pins/$V1 after the pin"
"$CLI" pin --server "unix:$SOCK" --unpin >"$WORK/unpin.out" 2>&1 \
  && ok "unpin through the operator socket" || bad "unpin failed: $(cat "$WORK/unpin.out")"
[[ ! -e "$WORK/snap/pins/$V1" ]] && ok "unpin removed pins/$V1" || bad "pins/$V1 still there after unpin"

# 3. Admin HTTP: loopback unless opened with --admin-host.
bound=$(ss -Hltn "sport = :$ADMIN" | awk '{print $4}')
[[ "$bound" == "127.0.0.1:$ADMIN" ]] && ok "admin HTTP listens on 127.0.0.1 only ($bound)" \
  || bad "admin HTTP listens on '$bound', not 127.0.0.1:$ADMIN"
metrics=$(curl -fs "http://127.0.0.1:$ADMIN/metrics")
grep -q 'graphsieve_requests_total{code="PERMISSION_DENIED",method="PinVersion"} 1' <<<"$metrics" \
  && ok "/metrics counts the refused pin" || bad "/metrics has no refused PinVersion: $(grep PinVersion <<<"$metrics")"

# 4. A non-loopback operator listener is refused at start.
rc=0; "$BIN/server/graphsieve-server" --snapshot-root "$WORK/snap" --port 0 --admin-port -1 \
  --operator-address 0.0.0.0:0 >"$WORK/bad.out" 2>&1 || rc=$?
[[ $rc -eq 2 ]] && grep -q -- "--operator-address" "$WORK/bad.out" \
  && ok "--operator-address 0.0.0.0 refused (exit 2, names the flag)" \
  || bad "non-loopback operator address: exit $rc, $(cat "$WORK/bad.out")"

[[ $fail -eq 0 ]] || { echo "--- server stderr:"; cat "$WORK/server.err"; exit 1; }
echo "operator auth: all checks passed"
