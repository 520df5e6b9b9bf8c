#!/usr/bin/env bash
# The container image end to end, as an operator would run it:
#   1. the container engine answers (docker or podman);
#   2. the base image exists — pulled, or (offline) built from Debian's packages with
#      debootstrap and imported as BASE_IMAGE;
#   3. docker/Dockerfile builds from the repository root (timed; image size printed);
#   4. the image's own checks: numeric USER, EXPOSEd ports = the server's defaults;
#   5. graphsieve-gen (in the image) writes an impression log to a host directory;
#   6. the builder container reads it (read-only) and publishes two versions into a volume;
#   7. the server container serves that volume; from the host: /readyz, the gRPC health
#      service (liveness "" and readiness graphsieve.v1.SamplingRateService), and the
#      CLI's EXACT, INFERRED and DEFAULT answers; a pin through the data port is
#      refused, the same pin inside the container (docker exec, the operator socket)
#      rolls back to the first version and writes <root>/pins/ on the volume;
#   8. SIGTERM (docker stop) drains the server: exit code 0 and the drain logged.
# Not part of CI (.ci/run): a full image build takes minutes on 2 cores (README.md, "Deploy").
#
# Usage: scripts/docker-smoke.sh
# Environment:
#   ENGINE      docker (default) or podman (podman build works here; podman run does not
#               in this sandbox: its runc may not set RLIMIT_NPROC/NOFILE, which docker
#               does not try)
#   IMAGE       tag to build (graphsieve:smoke)
#   BASE_IMAGE  base of both stages (debian:12-slim)
#   OFFLINE_BASE=1  build BASE_IMAGE with debootstrap even if a pull might work
#   MIRROR      Debian mirror for debootstrap (http://deb.debian.org/debian)
#   CLI         host graphsieve CLI (build-ci/client/graphsieve, else build/client/graphsieve)
#   SKIP_BUILD=1  reuse IMAGE as it is
#   KEEP=1      leave the work directory, volume and container for inspection
set -euo pipefail
cd "$(dirname "$0")/.."
ENGINE=${ENGINE:-docker}
IMAGE=${IMAGE:-graphsieve:smoke}
BASE_IMAGE=${BASE_IMAGE:-debian:12-slim}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
WORK=$(mktemp -d /tmp/graphsieve-smoke.XXXXXX)
VOLUME=graphsieve-smoke-$$
SERVER=graphsieve-smoke-server-$$

step() { printf '\n== %s\n' "$*"; }
die() { echo "docker-smoke: FAIL: $*" >&2; exit 1; }
cleanup() {
  if [[ "${KEEP:-0}" == "1" ]]; then echo "kept: $WORK, volume $VOLUME, container $SERVER"; return; fi
  $ENGINE rm -f "$SERVER" >/dev/null 2>&1 || true
  $ENGINE volume rm -f "$VOLUME" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

PYTHON=${PYTHON:-/usr/bin/python3}  # Debian's, with python3-grpcio (scripts/install-deps.sh)
"$PYTHON" -c "import grpc" 2>/dev/null || die "$PYTHON cannot import grpc (apt-get install -y python3-grpcio)"

step "1/8 container engine: $ENGINE"
if ! $ENGINE info >/dev/null 2>&1; then
  die "'$ENGINE info' fails. Install it from Debian (apt-get install -y docker.io podman) and,
  for docker, start the daemon: dockerd >/tmp/dockerd.log 2>&1 &"
fi
$ENGINE --version

step "2/8 base image $BASE_IMAGE"
if $ENGINE image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  echo "present"
elif [[ "${OFFLINE_BASE:-0}" != "1" ]] && timeout 60 $ENGINE pull "$BASE_IMAGE" >/dev/null 2>&1; then
  echo "pulled"
else
  # Offline: the same Debian 12 packages, assembled by debootstrap (apt-get install -y
  # debootstrap). minbase is what the official debian images are built from; the apt
  # sources match theirs (bookworm, -updates, -security) so the Dockerfile's apt-get
  # sees the same package versions.
  command -v debootstrap >/dev/null || die "no $BASE_IMAGE and no debootstrap (apt-get install -y debootstrap)"
  [[ $(id -u) -eq 0 ]] || die "debootstrap needs root"
  echo "cannot pull $BASE_IMAGE: building it with debootstrap from $MIRROR"
  t0=$(date +%s)
  debootstrap --variant=minbase bookworm "$WORK/rootfs" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
    || { tail -20 "$WORK/debootstrap.log"; die "debootstrap failed"; }
  rm -f "$WORK/rootfs/etc/apt/sources.list"
  cat >"$WORK/rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: ${MIRROR}
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${MIRROR%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  chroot "$WORK/rootfs" apt-get clean
  rm -rf "$WORK/rootfs/var/lib/apt/lists/"* "$WORK/rootfs/var/cache/apt/"*.bin
  tar -C "$WORK/rootfs" -c . | $ENGINE import --change 'CMD ["bash"]' - "$BASE_IMAGE" >/dev/null
  rm -rf "$WORK/rootfs"
  echo "imported $BASE_IMAGE in $(( $(date +%s) - t0 )) s"
fi

step "3/8 $ENGINE build -f docker/Dockerfile -t $IMAGE ."
if [[ "${SKIP_BUILD:-0}" == "1" ]]; then
  echo "SKIP_BUILD=1: using $IMAGE as it is"
else
  t0=$(date +%s)
  # The build stage first, tagged so step 4 can inspect it; the full build reuses it.
  $ENGINE build -f docker/Dockerfile --target build --build-arg "BASE_IMAGE=$BASE_IMAGE" \
    -t "$IMAGE-build-stage" . >"$WORK/build.log" 2>&1 \
    && $ENGINE build -f docker/Dockerfile --build-arg "BASE_IMAGE=$BASE_IMAGE" -t "$IMAGE" . \
    >>"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; die "image build failed"; }
  echo "built in $(( $(date +%s) - t0 )) s"
fi
size=$($ENGINE image inspect --format '{{.Size}}' "$IMAGE")
echo "image size: $(( size / 1000000 )) MB ($size bytes)"

step "4/8 image configuration"
user=$($ENGINE image inspect --format '{{.Config.User}}' "$IMAGE")
ports=$($ENGINE image inspect --format '{{range $p, $_ := .Config.ExposedPorts}}{{$p}} {{end}}' "$IMAGE")
echo "USER $user; EXPOSE $ports"
[[ "$user" =~ ^[0-9]+:[0-9]+$ && "${user%%:*}" != 0 ]] || die "USER '$user' is not a numeric non-root uid:gid"
for p in 50051 8080; do [[ " $ports" == *" $p/tcp "* ]] || die "port $p (a server default) not EXPOSEd"; done
# No test tools in either stage (with SKIP_BUILD=1 only the runtime stage is checked).
TEST_TOOLS='^(libgtest-dev|libgmock-dev|chromium|python3|python3-grpcio|prometheus|nodejs|openssl|curl)$'
stages="build runtime"; [[ "${SKIP_BUILD:-0}" == "1" ]] && stages=runtime
for stage in $stages; do
  tag=$IMAGE; tools=$TEST_TOOLS
  # ca-certificates (runtime) depends on the openssl program.
  [[ $stage == runtime ]] && tools=${TEST_TOOLS/|openssl/}
  [[ $stage == build ]] && tag=$IMAGE-build-stage
  $ENGINE run --rm --user 0 "$tag" dpkg-query -W -f '${Package}\n' >"$WORK/$stage.packages" \
    || die "cannot list the $stage stage's packages ($ENGINE run failed)"
  found=$(grep -E "$tools" "$WORK/$stage.packages" || true)
  [[ -z "$found" ]] || die "the $stage stage has test-only packages: $found"
  echo "$stage stage: $(wc -l <"$WORK/$stage.packages") Debian packages, none test-only"
done
$ENGINE rmi "$IMAGE-build-stage" >/dev/null 2>&1 || true
$ENGINE run --rm "$IMAGE" graphsieve-server --help >"$WORK/help.txt" 2>&1 || true
grep -q -- '--snapshot-root' "$WORK/help.txt" || { cat "$WORK/help.txt"; die "graphsieve-server does not run in the image"; }

step "5/8 generate an impression log (graphsieve-gen in the image)"
mkdir -p "$WORK/logs"
$ENGINE run --rm --user "$(id -u):$(id -g)" -v "$WORK/logs:/out" "$IMAGE" \
  graphsieve-gen --preset tiny --seed 7 --output /out/impressions.csv --quiet
echo "$(($(wc -l <"$WORK/logs/impressions.csv") - 1)) impressions"

step "6/8 builder container: log (read-only) -> snapshot volume $VOLUME"
$ENGINE volume create "$VOLUME" >/dev/null
$ENGINE run --rm -v "$WORK/logs:/logs:ro" -v "$VOLUME:/snapshots" "$IMAGE" \
  graphsieve-build --input /logs/impressions.csv --snapshot-root /snapshots --keep 3 --quiet \
  || die "the builder container failed"
V1=$($ENGINE run --rm -v "$VOLUME:/snapshots:ro" "$IMAGE" cat /snapshots/CURRENT)
# A second version (another alpha), the one CURRENT names; V1 is the rollback target.
$ENGINE run --rm -v "$WORK/logs:/logs:ro" -v "$VOLUME:/snapshots" "$IMAGE" \
  graphsieve-build --input /logs/impressions.csv --snapshot-root /snapshots --keep 3 --alpha 0.1 \
  --quiet || die "the second builder run failed"
VERSION=$($ENGINE run --rm -v "$VOLUME:/snapshots:ro" "$IMAGE" cat /snapshots/CURRENT)
echo "published $V1, then $VERSION (CURRENT)"

step "7/8 server container; queries from the host"
CLI=${CLI:-$( [[ -x build-ci/client/graphsieve ]] && echo build-ci/client/graphsieve || echo build/client/graphsieve)}
[[ -x "$CLI" ]] || die "no host CLI at $CLI: build it first (cmake --build build-ci --target graphsieve)"
$ENGINE run -d --name "$SERVER" -v "$VOLUME:/snapshots" -p 127.0.0.1::50051 -p 127.0.0.1::8080 \
  "$IMAGE" graphsieve-server --snapshot-root=/snapshots --admin-host=0.0.0.0 \
  --poll-interval-seconds=5 --drain-notice-seconds=1 --drain-grace-seconds=5 >/dev/null
hostport() { $ENGINE port "$SERVER" "$1/tcp" | head -1 | sed 's/.*://'; }
GRPC_PORT=$(hostport 50051); ADMIN_PORT=$(hostport 8080)
echo "gRPC 127.0.0.1:$GRPC_PORT, admin http://127.0.0.1:$ADMIN_PORT/"
ready=0
for _ in $(seq 1 120); do
  if curl -fs "http://127.0.0.1:$ADMIN_PORT/readyz" >"$WORK/readyz" 2>/dev/null; then ready=1; break; fi
  [[ $($ENGINE inspect --format '{{.State.Running}}' "$SERVER") == true ]] \
    || { $ENGINE logs "$SERVER"; die "server container exited"; }
  sleep 0.5
done
[[ $ready == 1 ]] || { $ENGINE logs "$SERVER"; die "/readyz never answered 200"; }
echo "/readyz: $(cat "$WORK/readyz")"
"$PYTHON" tests/deploy/grpc_health_check.py "127.0.0.1:$GRPC_PORT" "" SERVING
"$PYTHON" tests/deploy/grpc_health_check.py "127.0.0.1:$GRPC_PORT" graphsieve.v1.SamplingRateService SERVING
# A pair the builder saw, an unseen pair of two known nodes, an unknown user.
awk -F, -v out="$WORK/query.csv" '
  NR == 1 { next }
  { seen[$1 "," $2] = 1; items[$2] = 1; if (u == "") { u = $1; first = $2 } }
  END {
    print "user_id,item_id" > out; print u "," first > out
    for (i in items) if (!((u "," i) in seen)) { print u "," i > out; break }
    print "999999999,1" > out
  }' "$WORK/logs/impressions.csv"
"$CLI" rates --server "127.0.0.1:$GRPC_PORT" --input "$WORK/query.csv" | tee "$WORK/answer.csv"
for src in EXACT INFERRED DEFAULT; do
  grep -q ",$src\$" "$WORK/answer.csv" || die "no $src answer from the container"
done
# Operator action: refused through the published data port, accepted inside the
# container on the default operator socket (as kubectl exec would run it).
rc=0; "$CLI" pin --server "127.0.0.1:$GRPC_PORT" --version "$V1" >"$WORK/pin.out" 2>&1 || rc=$?
grep -q PERMISSION_DENIED "$WORK/pin.out" && [[ $rc -ne 0 ]] \
  || { cat "$WORK/pin.out"; die "a pin through the data port was not refused"; }
echo "pin from the host through the data port: refused (PERMISSION_DENIED)"
$ENGINE exec "$SERVER" graphsieve pin --version "$V1" | tee "$WORK/pin-op.out"
"$CLI" status --server "127.0.0.1:$GRPC_PORT" | grep -q "active version *$V1" || die "$V1 is not active after the pin"
$ENGINE run --rm -v "$VOLUME:/snapshots:ro" "$IMAGE" test -e "/snapshots/pins/$V1" \
  || die "no /snapshots/pins/$V1 after the pin (volume not writable by uid 10001?)"
echo "pin inside the container (exec): $V1 serves, pins/$V1 written"

step "8/8 SIGTERM: drain"
t0=$(date +%s)
$ENGINE stop --time 30 "$SERVER" >/dev/null
code=$($ENGINE inspect --format '{{.State.ExitCode}}' "$SERVER")
$ENGINE logs "$SERVER" 2>&1 | tail -4
[[ "$code" == 0 ]] || die "server exited $code after SIGTERM"
$ENGINE logs "$SERVER" 2>&1 | grep -q 'draining' || die "no drain logged"
echo "drained and exited 0 in $(( $(date +%s) - t0 )) s"
echo
echo "docker-smoke: PASS ($ENGINE, $IMAGE, $(( size / 1000000 )) MB)"
