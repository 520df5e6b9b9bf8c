#!/usr/bin/env bash
# A broken set-up fails CI; a skip passes CI=true only with a listed reason.
#
#   skip_check_test.sh <ci_world_fixture binary> <source dir>
#
# Registers the fixture (tests/ci/world_fixture.cc, a world test like
# tests/client's) in a CTest project of its own with cmake/world_test.cmake,
# runs ctest on it as scripts/test.sh does (--output-junit) and the same check
# scripts/test.sh runs after ctest (scripts/check-skips.py):
#   world set-up fails        -> ctest reports Failed (not Skipped) and exits non-zero
#   a skip, unlisted reason   -> ctest passes (Skipped); check-skips fails under CI=true, passes without
#   a skip, listed reason     -> check-skips passes under CI=true and prints the allowed list
set -euo pipefail
FIXTURE=$1
SRC=$2
DIR=$(mktemp -d "${TMPDIR:-/tmp}/skip-check.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$DIR/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(skip_check NONE)
enable_testing()
include($SRC/cmake/world_test.cmake)
add_test(NAME world COMMAND $FIXTURE)
graphsieve_world_test(world)
CMAKE
cmake -S "$DIR" -B "$DIR/build" >/dev/null

# run_ctest <mode> <reason>: ctest's exit status; its output in $DIR/ctest.out.
run_ctest() {
  local status=0
  GRAPHSIEVE_WORLD_FIXTURE=$1 GRAPHSIEVE_WORLD_FIXTURE_REASON=$2 \
    ctest --test-dir "$DIR/build" --output-junit "$DIR/junit.xml" >"$DIR/ctest.out" 2>&1 || status=$?
  return $status
}
check_skips() {  # check_skips <CI value>: check-skips.py's exit status; output in $DIR/check.out
  local status=0
  CI=$1 python3 "$SRC/scripts/check-skips.py" "$DIR/junit.xml" >"$DIR/check.out" 2>&1 || status=$?
  return $status
}

# 1. The world's set-up fails: Failed, never Skipped.
status=0
run_ctest broken "" || status=$?
[[ $status -ne 0 ]] || fail "ctest passed a run whose world set-up failed: $(cat "$DIR/ctest.out")"
grep -q 'world .*\*\*\*Failed' "$DIR/ctest.out" || fail "not reported Failed: $(cat "$DIR/ctest.out")"
! grep -q 'Skipped' "$DIR/ctest.out" || fail "a broken set-up reads Skipped: $(cat "$DIR/ctest.out")"
echo "ok: a failed world set-up is Failed in ctest (exit $status)"

# 2. A skip whose reason is not on the list: ctest passes (Skipped), CI=true fails it.
run_ctest skip "fixture: a reason nobody reviewed" || fail "ctest failed on a skip: $(cat "$DIR/ctest.out")"
grep -q 'world .*\*\*\*Skipped' "$DIR/ctest.out" || fail "the skip is not Skipped: $(cat "$DIR/ctest.out")"
status=0
check_skips true || status=$?
[[ $status -eq 1 ]] || fail "check-skips under CI=true exited $status on an unlisted reason: $(cat "$DIR/check.out")"
grep -q "skipped: world: fixture: a reason nobody reviewed  <- not on tests/allowed-skips.txt" "$DIR/check.out" ||
  fail "check-skips does not name the skip: $(cat "$DIR/check.out")"
check_skips "" || fail "check-skips outside CI failed: $(cat "$DIR/check.out")"
echo "ok: an unlisted skip fails check-skips under CI=true only"

# 3. A skip with a listed reason passes under CI=true; the list is printed.
run_ctest skip "no /dev/full" || fail "ctest failed on a skip: $(cat "$DIR/ctest.out")"
check_skips true || fail "check-skips refused a listed reason: $(cat "$DIR/check.out")"
grep -q "allowed: 'no /dev/full'" "$DIR/check.out" || fail "the allowed list is not printed: $(cat "$DIR/check.out")"
grep -q "skipped: world: no /dev/full$" "$DIR/check.out" || fail "the skip is not listed: $(cat "$DIR/check.out")"
echo "ok: a listed skip passes under CI=true, and the list is printed"
