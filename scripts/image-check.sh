#!/usr/bin/env bash
# The images in CI: scripts/docker-smoke.sh with the programs of the host build
# (BINARIES) instead of a second compile inside the image. Everything else is the
# operator's path: Docker's engine from Debian (started here if none answers, stopped
# again at the end), the debian:12-slim base (debootstrap when no registry serves it),
# docker/Dockerfile's package stages built from scripts/install-deps.sh and checked
# against its package groups, the server image's size, then the builder and server
# containers end to end. Needs root (dockerd, debootstrap).
#
# Usage: scripts/image-check.sh            (BUILD_DIR=build-ci by default; scripts/test.sh
#                                          runs it in CI, or with IMAGE_CHECK=1)
# The environment of scripts/docker-smoke.sh passes through (ENGINE is docker here).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-ci}
t0=$(date +%s)
./scripts/install-deps.sh --image-tools

DOCKERD_PID=""
DOCKERD_LOG=""
stop_dockerd() {
  local rc=$?
  if [[ -n "$DOCKERD_PID" ]]; then
    kill "$DOCKERD_PID" 2>/dev/null || true
    wait "$DOCKERD_PID" 2>/dev/null || true
  fi
  # The daemon's log outlives only a failed check.
  if [[ -n "$DOCKERD_LOG" ]]; then
    if [[ $rc -eq 0 ]]; then rm -f "$DOCKERD_LOG"; else echo "image-check: dockerd's log: $DOCKERD_LOG" >&2; fi
  fi
}
trap stop_dockerd EXIT
if ! docker info >/dev/null 2>&1; then
  [[ $(id -u) -eq 0 ]] || { echo "image-check: no Docker daemon answers and not root to start one" >&2; exit 1; }
  DOCKERD_LOG=$(mktemp /tmp/graphsieve-dockerd.XXXXXX.log)
  dockerd >"$DOCKERD_LOG" 2>&1 &
  DOCKERD_PID=$!
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
  docker info >/dev/null 2>&1 || { tail -20 "$DOCKERD_LOG"; echo "image-check: dockerd did not start" >&2; exit 1; }
  echo "image-check: started dockerd (pid $DOCKERD_PID, log $DOCKERD_LOG)"
fi

ENGINE=docker BINARIES="$BUILD_DIR" ./scripts/docker-smoke.sh
echo "image-check: done in $(( $(date +%s) - t0 )) s"
