#!/usr/bin/env bash
# Byte-identical check of two graphsieve-build binaries (docs/SCALING.md
# "Memory per impression"): the same log built by both on a few flag sets,
# then the export CSV, index.gsi and MANIFEST.json (without the fields that
# name the version, its time or its files' timings) compared byte for byte.
#
#   bench/compare_builds.sh --base BASE/graphsieve-build --new NEW/graphsieve-build \
#       --gen BUILD/gen/graphsieve-gen [--scale 0.05] [--work DIR] [--mpirun mpirun]
#
# Flag sets: default, with and without --export; --method max with the log's pilot column; a delta over
# the default build; np = 2 under mpirun with --partitions 2 (when mpirun is
# there); and, within the new binary, the default build against the one with
# --export (two code paths of the pipeline). Prints one line per comparison
# and exits 1 if anything differs. With --base = --new it is the CI test
# tests/distributed "dist_compare_builds" (the cross-binary lines then check
# that a build is deterministic).
set -euo pipefail

BASE="" NEW="" GEN="" SCALE=0.05 WORK="" MPIRUN="${MPIRUN:-mpirun}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --base) BASE="$2"; shift 2 ;;
    --new) NEW="$2"; shift 2 ;;
    --gen) GEN="$2"; shift 2 ;;
    --scale) SCALE="$2"; shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    --mpirun) MPIRUN="$2"; shift 2 ;;
    *) echo "compare_builds.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for b in "$BASE" "$NEW" "$GEN"; do
  [[ -x "$b" ]] || { echo "compare_builds.sh: --base, --new and --gen must be executables (got '$b')" >&2; exit 2; }
done
OWN_WORK=0
if [[ -z "$WORK" ]]; then WORK="$(mktemp -d "${TMPDIR:-/tmp}/compare_builds.XXXXXX")"; OWN_WORK=1; fi
mkdir -p "$WORK"
cleanup() { if [[ $OWN_WORK == 1 ]]; then rm -rf "$WORK"; fi; }
trap cleanup EXIT

LOG="$WORK/log.csv" NEWROWS="$WORK/new_rows.csv"
"$GEN" --preset kuairec --scale "$SCALE" --users_scale "$SCALE" --pilot --seed 3 --output "$LOG" \
  >/dev/null 2>"$WORK/gen.err" || { cat "$WORK/gen.err" >&2; exit 1; }
"$GEN" --preset kuairec --scale "$SCALE" --users_scale "$SCALE" --pilot --seed 4 \
  --instances 20000 --output "$NEWROWS" >/dev/null 2>"$WORK/gen.err" || { cat "$WORK/gen.err" >&2; exit 1; }

# The manifest without what differs between two runs of one binary.
normalise() {
  python3 - "$1" <<'EOF'
import json, sys
# Times, version ids and the db/ files' digests and total size, and so the size per pair
# (RocksDB's files carry a session id and times, so their sizes vary by a few bytes
# between two runs of one binary); index.gsi is compared as a file.
DROP = {"created_at", "version", "timings", "files", "base_version", "base_created_at",
        "covers_from", "covers_through", "db_bytes", "db_bytes_per_pair"}
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in DROP}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
print(json.dumps(strip(json.load(open(sys.argv[1]))), sort_keys=True, indent=1))
EOF
}

# run NAME BIN ROOT [flags...]: a build into ROOT.
run() {
  local bin="$1" root="$2"; shift 2
  "$bin" --snapshot_root "$root" --quiet --threads 2 "$@" >/dev/null
}

status=0
# compare LABEL ROOT_A ROOT_B [EXPORT_A EXPORT_B]
compare() {
  local label="$1" a="$2" b="$3" what="" ok=1
  local va vb
  va="$a/$(cat "$a/CURRENT")" vb="$b/$(cat "$b/CURRENT")"
  for f in $(cd "$va" && find . -name index.gsi | sort); do
    if cmp -s "$va/$f" "$vb/$f"; then what+=" ${f#./}"; else ok=0; what+=" ${f#./}:DIFFERS"; fi
  done
  for f in $(cd "$va" && find . -name MANIFEST.json | sort); do
    if cmp -s <(normalise "$va/$f") <(normalise "$vb/$f"); then
      what+=" ${f#./}"
    else
      ok=0; what+=" ${f#./}:DIFFERS"
    fi
  done
  if [[ $# -ge 5 ]]; then
    if cmp -s "$4" "$5"; then what+=" export"; else ok=0; what+=" export:DIFFERS"; fi
  fi
  if [[ $ok == 1 ]]; then echo "same      $label:$what"; else echo "DIFFERENT $label:$what"; status=1; fi
}

for side in base new; do
  bin="$BASE"; [[ $side == new ]] && bin="$NEW"
  run "$bin" "$WORK/$side-plain" --input "$LOG"
  run "$bin" "$WORK/$side-default" --input "$LOG"
  run "$bin" "$WORK/$side-export" --input "$LOG" --export "$WORK/$side-default.export.csv"
  run "$bin" "$WORK/$side-max" --input "$LOG" --pilot_col pilot_score --method max \
    --export "$WORK/$side-max.export.csv"
  run "$bin" "$WORK/$side-default" --input "$NEWROWS" --delta_of CURRENT
done
compare "default" "$WORK/base-plain" "$WORK/new-plain"
# Within the new binary: without --export the pipeline keeps no per-pair
# details (PipelineOptions::per_pair_details), with it all of them.
compare "new binary: default against --export" "$WORK/new-plain" "$WORK/new-export"
compare "default, --export" "$WORK/base-export" "$WORK/new-export" \
  "$WORK/base-default.export.csv" "$WORK/new-default.export.csv"
compare "--method max --pilot_col pilot_score" "$WORK/base-max" "$WORK/new-max" \
  "$WORK/base-max.export.csv" "$WORK/new-max.export.csv"
compare "delta over default" "$WORK/base-default" "$WORK/new-default"
if command -v "$MPIRUN" >/dev/null 2>&1; then
  for side in base new; do
    bin="$BASE"; [[ $side == new ]] && bin="$NEW"
    "$MPIRUN" --allow-run-as-root --oversubscribe -np 2 "$bin" --snapshot_root "$WORK/$side-np2" \
      --quiet --threads 1 --partitions 2 --input "$LOG" >/dev/null
  done
  compare "np 2 --partitions 2" "$WORK/base-np2" "$WORK/new-np2"
else
  echo "skipped   np 2: no $MPIRUN"
fi
exit $status
