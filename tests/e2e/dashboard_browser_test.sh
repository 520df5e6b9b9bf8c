#!/usr/bin/env bash
# The ops dashboard in a real browser: build a small snapshot, start the real
# graphsieve-server on loopback, send traffic, load http://ADMIN/ in headless
# Chromium and check the DOM its JavaScript rendered from /status.json
# (serving state, the snapshot version, counts, rates, refresh history).
# Usage: dashboard_browser_test.sh BUILD_DIR WORK_DIR
set -euo pipefail
BIN=$1; WORK=$2
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
[[ -x "$CHROMIUM" ]] || { echo "FAIL: chromium not found (scripts/install-deps.sh installs it)"; exit 1; }
rm -rf "$WORK"; mkdir -p "$WORK"
"$BIN/gen/graphsieve-gen" --preset tiny --seed 3 --output "$WORK/log.csv" --quiet
"$BIN/builder/graphsieve-build" --input "$WORK/log.csv" --snapshot-root "$WORK/snap" --quiet
VERSION=$(cat "$WORK/snap/CURRENT")

"$BIN/server/graphsieve-server" --snapshot-root "$WORK/snap" --host 127.0.0.1 --port 0 \
  --admin-host 127.0.0.1 --admin-port 0 --poll-interval-seconds -1 --pin-version "$VERSION" \
  >"$WORK/server.out" 2>"$WORK/server.err" &
PID=$!
trap 'kill -TERM $PID 2>/dev/null || true; wait $PID 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  grep -q "listening" "$WORK/server.out" 2>/dev/null && break
  kill -0 $PID 2>/dev/null || { cat "$WORK/server.err"; echo "FAIL: server died"; exit 1; }
  sleep 0.1
done
PORT=$(sed -n 's/.* port=\([0-9]*\).*/\1/p' "$WORK/server.out" | head -1)
ADMIN=$(sed -n 's/.*admin_port=\([0-9]*\).*/\1/p' "$WORK/server.out" | head -1)
[[ -n "$PORT" && -n "$ADMIN" ]] || { cat "$WORK/server.out"; echo "FAIL: no ports"; exit 1; }
# Bounded (60 s: a sanitizer build or a loaded machine loads slowly), and an
# explicit failure: the page must not be rendered before the server serves.
READY=0
for _ in $(seq 1 600); do
  curl -fs "http://127.0.0.1:$ADMIN/readyz" >/dev/null && { READY=1; break; }
  sleep 0.1
done
[[ $READY -eq 1 ]] || { cat "$WORK/server.err"; echo "FAIL: server not ready within 60 s"; exit 1; }

# Traffic while the page is open, so its rate panels have something to show.
head -200 "$WORK/log.csv" | cut -d, -f1,2 >"$WORK/pairs.csv"
( for _ in $(seq 1 40); do
    "$BIN/client/graphsieve" rates --server "127.0.0.1:$PORT" --input "$WORK/pairs.csv" >/dev/null 2>&1 || true
    sleep 0.2
  done ) &
LOAD=$!

# --virtual-time-budget lets the page's 2 s polling timer fire a few times.
timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$WORK/chromium-profile" --virtual-time-budget=8000 \
  --dump-dom "http://127.0.0.1:$ADMIN/" >"$WORK/dom.html" 2>"$WORK/chromium.err" || true
wait $LOAD || true

fail=0
check() { if grep -q -- "$2" "$WORK/dom.html"; then echo "ok: $1"; else echo "FAIL: $1 (no '$2' in the rendered page)"; fail=1; fi; }
check "state rendered as serving" 'id="state"[^>]*>serving<'
check "the pinned snapshot version shown" "id=\"ver\"[^>]*>$VERSION<"
check "refresh history lists the version" "<td>$VERSION</td>"
# Numbers the page's script computed or copied from /status.json (not the
# '–' placeholders of the static HTML). Rates per second depend on how the
# browser's virtual clock spaces the polls, so only their presence is checked.
PAIRS=$(curl -fs "http://127.0.0.1:$ADMIN/status.json" | grep -o '"pairs": *"\?[0-9]*' | head -1 | grep -o '[0-9]*$')
[[ -n "$PAIRS" ]] || { echo "FAIL: /status.json has no pairs count"; fail=1; }
check "snapshot table shows the pair count from /status.json" "<th>pairs</th><td>$PAIRS</td>"
if grep -q 'id="qps"[^>]*>[0-9]' "$WORK/dom.html"; then echo "ok: requests/s computed"; else echo "FAIL: requests/s not rendered"; fail=1; fi
if [[ $fail -ne 0 ]]; then echo "--- rendered DOM:"; head -c 4000 "$WORK/dom.html"; exit 1; fi
echo "dashboard renders in $("$CHROMIUM" --version 2>/dev/null | head -1)"
