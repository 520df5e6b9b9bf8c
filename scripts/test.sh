#!/usr/bin/env bash
# The full test suite, from a fresh Debian 12 machine: installs the Debian
# packages, builds everything (warnings are errors), runs every CTest test.
# Usage: scripts/test.sh [ctest args...]   (BUILD_DIR=build-ci by default)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build-ci}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGRAPHSIEVE_WERROR=ON
cmake --build "$BUILD_DIR" -j2
cd "$BUILD_DIR"
ctest --output-on-failure -j2 --timeout 600 "$@"
