#!/usr/bin/env bash
# The ops dashboard in a real browser (headless Chromium from Debian) against the
# real graphsieve-server, with the numbers checked against exact references:
#   A. idle, first render (one poll): serving, the pinned version, rates computed by
#      the server (0, not a placeholder), latency "idle", no comparison panel, and the
#      rate histogram = the histogram of the builder's export of that version;
#   B. after a swap to a second version (operator pin) and traffic (labelled and not):
#      the comparison panel (Δ mean rate, share moved > 0.05, KS distance) equals the
#      statistics computed here from the two exports; the negatives-served panel
#      equals what `graphsieve filter` reports; latency and rates are numbers; no raw
#      long decimals anywhere; a screenshot shows the histograms and the status colours
#      (pixels counted by tests/e2e/png_colors.py).
# Usage: dashboard_browser_test.sh BUILD_DIR WORK_DIR
set -euo pipefail
BIN=$1; WORK=$2
HERE=$(cd "$(dirname "$0")" && pwd)
CLI=$BIN/client/graphsieve
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
[[ -x "$CHROMIUM" ]] || { echo "FAIL: chromium not found (scripts/install-deps.sh installs it)"; exit 1; }
rm -rf "$WORK"; mkdir -p "$WORK"
"$BIN/gen/graphsieve-gen" --preset tiny --seed 3 --output "$WORK/log.csv" --quiet
"$BIN/builder/graphsieve-build" --input "$WORK/log.csv" --snapshot-root "$WORK/snap" --alpha 0.2 \
  --export "$WORK/v1.csv" --quiet
V1=$(cat "$WORK/snap/CURRENT")
"$BIN/builder/graphsieve-build" --input "$WORK/log.csv" --snapshot-root "$WORK/snap" --alpha 0.1 \
  --export "$WORK/v2.csv" --quiet
V2=$(cat "$WORK/snap/CURRENT")

SOCK=$WORK/operator.sock
"$BIN/server/graphsieve-server" --snapshot-root "$WORK/snap" --host 127.0.0.1 --port 0 \
  --admin-port 0 --poll-interval-seconds -1 --pin-version "$V1" --operator-address "unix:$SOCK" \
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

# Waits (bounded) until the Python expression over /status.json (d) is true.
wait_status() {
  for _ in $(seq 1 150); do
    curl -fs "http://127.0.0.1:$ADMIN/status.json" >"$WORK/status.json" 2>/dev/null &&
      python3 -c "import json,sys; d=json.load(open('$WORK/status.json')); sys.exit(0 if ($1) else 1)" \
        2>/dev/null && return 0
    sleep 0.2
  done
  echo "FAIL: /status.json never satisfied: $1"; cat "$WORK/server.err"; exit 1
}
render() {  # render NAME: the DOM after the first poll, and a screenshot
  local flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars
    --user-data-dir="$WORK/chromium-$1" --window-size=1200,1900 --virtual-time-budget=1000)
  timeout 90 "$CHROMIUM" "${flags[@]}" --dump-dom "http://127.0.0.1:$ADMIN/" >"$WORK/$1.html" 2>>"$WORK/chromium.err" || true
  timeout 90 "$CHROMIUM" "${flags[@]}" --screenshot="$WORK/$1.png" "http://127.0.0.1:$ADMIN/" >/dev/null 2>>"$WORK/chromium.err" || true
}

# ---- A: idle, first render -------------------------------------------------
wait_status "d.get('rate_profile') and d['rate_profile']['version'] == '$V1' and d['traffic']['window_seconds']"
render idle
# ---- B: swap, traffic -----------------------------------------------------
"$CLI" pin --server "unix:$SOCK" --version "$V2" >/dev/null
"$CLI" filter --server "127.0.0.1:$PORT" --input "$WORK/log.csv" --output /dev/null 2>"$WORK/filter.err"
head -300 "$WORK/log.csv" | cut -d, -f1,2 >"$WORK/pairs.csv"
for _ in 1 2 3; do "$CLI" rates --server "127.0.0.1:$PORT" --input "$WORK/pairs.csv" >/dev/null 2>&1; done
wait_status "d.get('comparison') and d['comparison']['to_version'] == '$V2' and d['traffic']['latency']['calls'] >= 4"
render swapped

python3 - "$WORK" "$V1" "$V2" <<'EOF'
import csv, html, json, re, sys
work, v1, v2 = sys.argv[1:]
fail = 0
def check(name, cond, detail=""):
    global fail
    print(("ok: " if cond else "FAIL: ") + name + ("" if cond else f" ({detail})"))
    fail |= not cond

def rates(path):
    with open(path) as f:
        return {(r["user_id"], r["item_id"]): float(r["rate"]) for r in csv.DictReader(f)}
def bins(values):
    out = [0] * 20
    for r in values:
        import math
        out[min(19, max(0, math.ceil(r * 20 - 1e-9) - 1))] += 1
    return out
def text(dom, id_):  # inner text of the element with this id (tags stripped)
    m = re.search(r'id="%s"[^>]*>(.*?)</(?:div|span|p|table|svg)>' % id_, dom, re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", m.group(1))).strip() if m else None
def rects(dom, id_):
    m = re.search(r'<svg id="%s".*?</svg>' % id_, dom, re.S)
    return [int(c) for c in re.findall(r'<rect [^>]*data-count="(\d+)"', m.group(0))] if m else []
def visible(dom, id_):
    m = re.search(r'id="%s"([^>]*)>' % id_, dom)
    return m is not None and re.search(r"display:\s*none", m.group(1)) is None
def signed(x, d):
    return ("+" if x > 0 else "\u2212" if x < 0 else "\u00b1") + f"{abs(x):.{d}f}"

a, b = rates(f"{work}/v1.csv"), rates(f"{work}/v2.csv")
status = json.load(open(f"{work}/status.json"))
idle = open(f"{work}/idle.html").read()
swapped = open(f"{work}/swapped.html").read()

# A: idle first render.
check("idle: state serving", text(idle, "state") == "serving", text(idle, "state"))
check("idle: version is the pinned one", text(idle, "ver") == v1, text(idle, "ver"))
check("idle: requests/s computed by the server on the first render", text(idle, "qps") == "0", text(idle, "qps"))
check("idle: latency says idle", text(idle, "lat") == "idle", text(idle, "lat"))
check("idle: no comparison before a swap", not visible(idle, "cmpbox"))
check("idle: rate histogram = the export's histogram", rects(idle, "hist") == bins(a.values()),
      f"{rects(idle, 'hist')} vs {bins(a.values())}")

# B: the comparison against the two exports (pairs in both).
common = [k for k in a if k in b]
d = [b[k] - a[k] for k in common]
n = len(common)
mean_delta = sum(d) / n
moved = sum(abs(x) > 0.05 for x in d) / n
def ks(x, y):
    x, y = sorted(x), sorted(y)
    i = j = 0; best = 0.0
    while i < len(x) and j < len(y):
        v = min(x[i], y[j])
        while i < len(x) and x[i] == v: i += 1
        while j < len(y) and y[j] == v: j += 1
        best = max(best, abs(i / len(x) - j / len(y)))
    return best
ksd = ks([a[k] for k in common], [b[k] for k in common])
c = status["comparison"]
check("comparison: from/to versions", (c["from_version"], c["to_version"]) == (v1, v2), str(c))
check(f"comparison: pairs compared = {n}", c["pairs_compared"] == n, c["pairs_compared"])
check(f"comparison: mean delta {mean_delta:.6f}", abs(c["mean_delta"] - mean_delta) < 1e-6, c["mean_delta"])
check(f"comparison: share moved > 0.05 = {moved:.6f}", abs(c["fraction_moved"] - moved) < 1e-9, c["fraction_moved"])
check(f"comparison: KS distance {ksd:.6f}", abs(c["ks_distance"] - ksd) < 1e-9, c["ks_distance"])
check("page: comparison panel shown", visible(swapped, "cmpbox"))
cards = html.unescape(re.sub(r"<[^>]+>", "|", re.search(r'id="cmpcards".*?</div>\s*</div>\s*<p', swapped, re.S).group(0)))
for label, shown in [("\u0394 mean rate", signed(c["mean_delta"], 4)),
                     ("KS distance", f"{c['ks_distance']:.3f}"),
                     ("pairs moved > 0.05", f"{100 * c['fraction_moved']:.2f} %")]:
    check(f"page: {label} shows {shown}", shown in cards, cards[:300])
check("page: histogram of the new version = its export's", rects(swapped, "hist") == bins(b.values()))

# Negatives served = what the filter reported.
m = re.search(r"kept (\d+) of (\d+) negatives", open(f"{work}/filter.err").read())
ns = status["negatives_served"]
check("negatives served: instances and kept = graphsieve filter's",
      m is not None and (ns["kept"], ns["instances"]) == (int(m.group(1)), int(m.group(2))), f"{ns} vs {m and m.groups()}")
check("negatives served: histogram sums to the instances", sum(ns["instance_counts"]) == ns["instances"])
check("page: negatives panel shown with its count", visible(swapped, "negbox") and f"{ns['instances']:,}" in (text(swapped, "negtable") or ""))

# Traffic and formatting.
check("page: latency p50 / p99 are durations", re.fullmatch(r"[\d.]+ (µs|ms|s) / >? ?[\d.]+ (µs|ms|s)", text(swapped, "lat") or "") is not None, text(swapped, "lat"))
check("page: requests/s is a number", re.fullmatch(r"[\d.]+( [kMG])?", text(swapped, "qps") or "") is not None, text(swapped, "qps"))
body = re.sub(r"<script.*?</script>", "", swapped, flags=re.S)
raw = re.findall(r">[^<]*\d\.\d{6,}[^<]*<", body)
check("page: no raw long decimals", not raw, raw[:3])
rule = status["active"]
check("status: the rate rule from the manifest", rule.get("rate_rule") == "mixture" and "kappa" in rule and "score_power" in rule, {k: rule.get(k) for k in ("rate_rule", "kappa", "score_power")})
check("page: the snapshot table names the rate rule", f"rate rulemixture, κ {rule.get('kappa', 0):g}," in (text(swapped, "snap") or ""), text(swapped, "snap"))
check("page: the rule in force (built from flags given by hand: not tuned)", "rule in forcenot tuned (flags given by hand)" in (text(swapped, "snap") or ""), text(swapped, "snap"))
sys.exit(1 if fail else 0)
EOF

# The screenshot: the two histograms' colours and the status colours are on the page.
python3 "$HERE/png_colors.py" "$WORK/swapped.png" 2563eb:3000 7c3aed:3000 b54708:30 17803d:30
echo "dashboard renders in $("$CHROMIUM" --version 2>/dev/null | head -1)"
