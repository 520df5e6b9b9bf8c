#!/usr/bin/env bash
# The curve group's KEEP=1 path (scripts/eval/groups/curve.sh): with CURVE_SETS=none it runs no
# set and rebuilds the tables from the kept results, which must equal the committed tables byte
# for byte, carry every set's command and timing, and say in RUN.txt which run they came from.
# A set missing from the kept results leaves the tables (so a test against a wrong file fails).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
fail() { echo "curve_keep_test: $*" >&2; exit 1; }

run_keep() {  # run_keep PREVIOUS_DIR OUT_DIR: the group script as scripts/eval-report.sh runs it
  mkdir -p "$2" "$T/work"
  rm -rf "${T:?}/work/"*
  OUT="$2" WORK="$T/work" PREVIOUS="$1" KEEP=1 CURVE_SETS=none EVAL=/nonexistent GEN=/nonexistent \
    SEEDS=8 FIRST_SEED=1 THREADS=1 JOBS=1 ML="" bash "$ROOT/scripts/eval/groups/curve.sh"
}

committed="$ROOT/docs/eval/curve"
run_keep "$committed" "$T/out"
for f in curve.md budget.md curve.csv curve.svg; do
  cmp -s "$committed/$f" "$T/out/$f" || fail "$f rebuilt from the kept results differs from docs/eval/curve/$f"
done
sets=$(cd "$committed" && ls -- *-*-*.json | sed 's/\.json$//')
[[ -n "$sets" ]] || fail "no set results in docs/eval/curve"
for set in $sets; do
  cmp -s "$committed/$set.json" "$T/out/$set.json" || fail "$set.json was not kept as is"
  grep -qF -- "--output_json=\$WORK/$set.json" "$T/out/commands.txt" || fail "$set: command not carried"
  grep -q "^$set wall " "$T/work/timings.txt" || fail "$set: timing not carried"
done
grep -q "^kept from the previous run (commit: " "$T/work/run-notes.txt" || fail "no RUN.txt note"

# Drop one set from the kept results: the rebuilt table no longer holds it.
mkdir -p "$T/partial"
cp "$committed"/* "$T/partial/"
first=$(echo "$sets" | head -1)
rm "$T/partial/$first.json"
run_keep "$T/partial" "$T/out2"
[[ ! -f "$T/out2/$first.json" ]] || fail "a set missing from the kept results appeared"
if cmp -s "$committed/curve.md" "$T/out2/curve.md"; then fail "curve.md did not change without $first"; fi
echo "curve_keep_test: ok ($(echo "$sets" | wc -l) sets kept, tables byte for byte)"
