#!/usr/bin/env bash
# The full test suite, from a fresh Debian 12 machine: installs the Debian
# packages, builds everything (warnings are errors), runs every CTest test.
# Fails first when a tracked C++/proto file is not clang-formatted
# (scripts/check-format.sh). The tests run with TMPDIR and TEST_TMPDIR on a fresh
# directory; a passing run that leaves anything there fails, listing it.
# Usage: scripts/test.sh [ctest args...]   (BUILD_DIR=build-ci by default)
# SANITIZE=address,undefined (or thread) builds with those sanitizers in
# build-<name> (e.g. build-asan) and runs the same suite; see docs/RELIABILITY.md.
# FUZZ_SECONDS=N (opt-in, off by default): after the suite, also builds the
# libFuzzer targets with clang in build-fuzz and runs each N seconds on its
# seed corpus (fuzz/run-short.sh; docs/RELIABILITY.md, "Fuzzing in CI").
# IMAGE_CHECK=1 (on by default in CI, CI=true): before the tests, scripts/image-check.sh
# builds the server and builder images from docker/Dockerfile's package stages with the
# programs just built, checks their packages against scripts/install-deps.sh's groups
# and runs them end to end (root; Docker's engine from Debian; README.md, "Deploy").
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
# Unformatted C++/proto lines fail the run before anything is built.
./scripts/check-format.sh
SANITIZE=${SANITIZE:-}
if [[ -n "$SANITIZE" && -z "${BUILD_DIR:-}" ]]; then
  case "$SANITIZE" in
    *thread*) BUILD_DIR=build-tsan ;;
    *) BUILD_DIR=build-asan ;;
  esac
fi
BUILD_DIR=${BUILD_DIR:-build-ci}
if [[ -n "$SANITIZE" ]]; then source scripts/sanitizer-env.sh; fi
# The benchmarks are no tests: a sanitizer build skips them.
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGRAPHSIEVE_WERROR=ON \
  -DGRAPHSIEVE_SANITIZE="$SANITIZE" -DGRAPHSIEVE_BUILD_BENCH="$([[ -n $SANITIZE ]] && echo OFF || echo ON)"
cmake --build "$BUILD_DIR" -j2
IMAGE_CHECK=${IMAGE_CHECK:-$([[ "${CI:-}" == true && -z "$SANITIZE" ]] && echo 1 || echo 0)}
if [[ "$IMAGE_CHECK" == 1 ]]; then BUILD_DIR="$BUILD_DIR" ./scripts/image-check.sh; fi
# Temporary files: ctest runs with TMPDIR and TEST_TMPDIR on a fresh directory of this run's
# own (GoogleTest's ::testing::TempDir(), Python's tempfile, mktemp and graphsieve-eval's work
# directories read them), and every test removes what it made there: after a passing run,
# anything left fails the run, listed (docs/RELIABILITY.md, "Temporary files").
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/graphsieve-ctest.XXXXXX")
trap 'rm -rf "$TEST_TMP"' EXIT
# The JUnit report keeps every test's output (skipped ones' reasons included)
# for scripts/check-skips.py below.
JUNIT=$PWD/$BUILD_DIR/ctest-junit.xml
TMPDIR="$TEST_TMP" TEST_TMPDIR="$TEST_TMP" \
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 --timeout 600 \
  --output-junit "$JUNIT" --test-output-size-passed 1048576 --test-output-size-failed 1048576 "$@"
# Every skip with its reason, and the short list of reasons allowed under CI=true
# (tests/allowed-skips.txt); under CI=true any other skip fails the run.
./scripts/check-skips.py "$JUNIT"
if [[ -n "$(ls -A "$TEST_TMP")" ]]; then
  {
    echo "scripts/test.sh: FAIL: the tests passed but left files in TMPDIR=$TEST_TMP;" \
      "each test must remove what it creates (docs/RELIABILITY.md, \"Temporary files\")." \
      "A gtest program's directory is named after the program:"
    find "$TEST_TMP" -mindepth 1 -maxdepth 2 \( -type d -printf '  %P/\n' -o -printf '  %P\n' \) |
      sort | head -60
    echo "($(find "$TEST_TMP" -mindepth 1 | wc -l) files and directories in all; removed now)"
  } >&2
  exit 1
fi
rm -rf "$TEST_TMP"
trap - EXIT
FUZZ_SECONDS=${FUZZ_SECONDS:-0}
if [[ "$FUZZ_SECONDS" != 0 ]]; then
  # Only the fuzz targets and the libraries they link (no tests, no benchmarks).
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DGRAPHSIEVE_FUZZ=ON \
    -DGRAPHSIEVE_BUILD_TESTS=OFF -DGRAPHSIEVE_BUILD_BENCH=OFF
  cmake --build build-fuzz -j2 --target fuzz_log_reader fuzz_manifest fuzz_cli_inputs \
    fuzz_sampling_rate fuzz_snapshot_open
  fuzz/run-short.sh build-fuzz "$FUZZ_SECONDS"
fi
