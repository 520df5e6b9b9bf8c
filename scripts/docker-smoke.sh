#!/usr/bin/env bash
# The container images end to end, as an operator would run them:
#   1. the container engine answers (docker or podman);
#   2. the base image exists — pulled, or (offline) built from Debian's packages with
#      debootstrap and imported as BASE_IMAGE;
#   3. docker/Dockerfile builds the server and the builder image from the repository
#      root (timed; each image's size printed). With BINARIES=DIR the programs are not
#      compiled in the image: the Dockerfile's package stages are built as they are and
#      the programs of the host build DIR (stripped) are copied onto them (CI's form,
#      scripts/image-check.sh);
#   4. the images' own checks: each stage's Debian packages against the package groups
#      of scripts/install-deps.sh (the build stage asks for no TEST or IMAGE_TOOLS
#      package; a runtime image holds none, and no BUILD package and no package of
#      the other image's runtime group either), every program's shared libraries resolve, the server image at most
#      SERVER_MAX_MB, numeric USER, EXPOSEd ports = the server's defaults;
#   5. graphsieve-gen (builder image) writes an impression log to a host directory;
#   6. the builder container reads it (read-only) and publishes two versions into a
#      volume, the second under `mpirun -np 2` (two ranks, the log in two parts);
#   7. the server container serves that volume; from the host: /readyz, the gRPC health
#      service (liveness "" and readiness graphsieve.v1.SamplingRateService), and the
#      CLI's EXACT, INFERRED and DEFAULT answers; a pin through the data port is
#      refused, the same pin inside the container (docker exec, the operator socket)
#      rolls back to the first version and writes <root>/pins/ on the volume;
#   8. SIGTERM (docker stop) drains the server: exit code 0 and the drain logged.
# CI runs it with BINARIES (scripts/image-check.sh, from scripts/test.sh): the full
# build would compile the project a second time inside the image (docs/DEPLOY.md, "In CI").
#
# Usage: scripts/docker-smoke.sh
# Environment:
#   ENGINE      docker (default) or podman (podman build works here; podman run does not
#               in this sandbox: its runc may not set RLIMIT_NPROC/NOFILE, which docker
#               does not try)
#   IMAGE       server image tag to build (graphsieve:smoke)
#   BUILDER_IMAGE  builder image tag to build (graphsieve-builder:smoke)
#   BASE_IMAGE  base of every stage (debian:12-slim)
#   OFFLINE_BASE=1  build BASE_IMAGE with debootstrap even if a pull might work
#   MIRROR      Debian mirror for debootstrap (http://deb.debian.org/debian)
#   BINARIES    a host build directory (e.g. build-ci): its programs instead of a compile
#               in the image
#   CLI         host graphsieve CLI (BINARIES/client/graphsieve, else build-ci/…, else build/…)
#   GROUPS_FROM the install-deps.sh whose package groups the images are checked against
#               (scripts/install-deps.sh, the one the images are built with)
#   SERVER_MAX_MB  the server image's size limit (280)
#   SKIP_BUILD=1  reuse IMAGE and BUILDER_IMAGE as they are
#   KEEP=1      leave the work directory, volume and container for inspection
set -euo pipefail
cd "$(dirname "$0")/.."
ENGINE=${ENGINE:-docker}
IMAGE=${IMAGE:-graphsieve:smoke}
BUILDER_IMAGE=${BUILDER_IMAGE:-graphsieve-builder:smoke}
BASE_IMAGE=${BASE_IMAGE:-debian:12-slim}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
BINARIES=${BINARIES:-}
GROUPS_FROM=${GROUPS_FROM:-scripts/install-deps.sh}
SERVER_MAX_MB=${SERVER_MAX_MB:-280}
WORK=$(mktemp -d /tmp/graphsieve-smoke.XXXXXX)
VOLUME=graphsieve-smoke-$$
SERVER=graphsieve-smoke-server-$$
T_START=$(date +%s)

step() { printf '\n== %s (%d s)\n' "$*" "$(( $(date +%s) - T_START ))"; }
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
if [[ -n "$BINARIES" ]]; then
  for p in server/graphsieve-server client/graphsieve builder/graphsieve-build gen/graphsieve-gen \
           eval/graphsieve-eval; do
    [[ -x "$BINARIES/$p" ]] || die "BINARIES=$BINARIES has no $p (build it first: cmake --build $BINARIES)"
  done
fi
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


step "3/8 images from docker/Dockerfile: $IMAGE (server), $BUILDER_IMAGE (builder)"
DEPS_TAG=$IMAGE-build-deps  # the build stage's packages (the compile adds none)
build_target() {  # target tag
  $ENGINE build -f docker/Dockerfile --target "$1" --build-arg "BASE_IMAGE=$BASE_IMAGE" -t "$2" . \
    >>"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; die "image build (--target $1) failed"; }
}
if [[ "${SKIP_BUILD:-0}" == "1" ]]; then
  echo "SKIP_BUILD=1: using $IMAGE and $BUILDER_IMAGE as they are"
elif [[ -n "$BINARIES" ]]; then
  # The Dockerfile's package stages (no compile), then the host's programs on top,
  # stripped as `cmake --install --strip` strips them in the image.
  t0=$(date +%s)
  build_target build-deps "$DEPS_TAG"
  build_target server-base "$IMAGE-base"
  build_target builder-base "$BUILDER_IMAGE-base"
  mkdir -p "$WORK/server-bin" "$WORK/builder-bin"
  cp "$BINARIES/server/graphsieve-server" "$BINARIES/client/graphsieve" "$WORK/server-bin/"
  cp "$BINARIES/builder/graphsieve-build" "$BINARIES/gen/graphsieve-gen" \
     "$BINARIES/eval/graphsieve-eval" "$WORK/builder-bin/"
  strip --strip-unneeded "$WORK"/server-bin/* "$WORK"/builder-bin/*
  for kind in server builder; do
    tag=$IMAGE; [[ $kind == builder ]] && tag=$BUILDER_IMAGE
    printf 'FROM %s\nCOPY . /usr/local/bin/\n' "$tag-base" \
      | $ENGINE build -f - -t "$tag" "$WORK/$kind-bin" >>"$WORK/build.log" 2>&1 \
      || { tail -20 "$WORK/build.log"; die "image build ($kind with $BINARIES's programs) failed"; }
  done
  echo "built from the package stages and $BINARIES's programs in $(( $(date +%s) - t0 )) s"
else
  t0=$(date +%s)
  # The package stage first, tagged so step 4 can inspect it; the full builds reuse it.
  build_target build-deps "$DEPS_TAG"
  build_target server "$IMAGE"
  build_target builder "$BUILDER_IMAGE"
  echo "built in $(( $(date +%s) - t0 )) s"
fi
mb() { echo $(( $($ENGINE image inspect --format '{{.Size}}' "$1") / 1000000 )); }
size=$(mb "$IMAGE"); builder_size=$(mb "$BUILDER_IMAGE")
echo "image size: server $IMAGE $size MB, builder $BUILDER_IMAGE $builder_size MB (base $BASE_IMAGE $(mb "$BASE_IMAGE") MB)"

step "4/8 image contents and configuration"
# Package groups as scripts/install-deps.sh declares them.
grp() { "$GROUPS_FROM" --print "$1" | sort -u; }
grp build >"$WORK/g.build"; grp test >"$WORK/g.test"; grp image-tools >"$WORK/g.tools"
grp server-runtime >"$WORK/g.server"; grp builder-runtime >"$WORK/g.builder"
for g in build test tools server builder; do
  [[ -s "$WORK/g.$g" ]] && ! grep -qvE '^[a-z0-9][a-z0-9+.-]+$' "$WORK/g.$g" \
    || die "$GROUPS_FROM --print gave no package group ($g): $(head -3 "$WORK/g.$g")"
done
cat "$WORK/g.test" "$WORK/g.tools" | sort -u >"$WORK/never"
# Not allowed in a stage: never TEST or IMAGE_TOOLS; in a runtime image also no BUILD
# package and none of the other image's runtime group, unless its own group names it.
sort -u "$WORK/never" >"$WORK/forbid.build-deps"
cat "$WORK/never" "$WORK/g.build" "$WORK/g.builder" | sort -u | comm -23 - "$WORK/g.server" \
  >"$WORK/forbid.server"
cat "$WORK/never" "$WORK/g.build" "$WORK/g.server" | sort -u | comm -23 - "$WORK/g.builder" \
  >"$WORK/forbid.builder"
stages="build-deps:$DEPS_TAG server:$IMAGE builder:$BUILDER_IMAGE"
[[ "${SKIP_BUILD:-0}" == "1" ]] && stages="server:$IMAGE builder:$BUILDER_IMAGE"
for entry in $stages; do
  stage=${entry%%:*}; tag=${entry#*:}
  # What the stage holds, and of that what it asked for (apt's manual marks: the
  # packages install-deps.sh named, and the base image's own).
  $ENGINE run --rm --user 0 "$tag" sh -c 'dpkg-query -W -f "\${Package}\n" >/tmp/all
    apt-mark showmanual >/tmp/manual; echo "== manual"; cat /tmp/manual; echo "== all"; cat /tmp/all' \
    >"$WORK/$stage.dpkg" || die "cannot list the $stage stage's packages ($ENGINE run failed)"
  sed -n '/^== manual$/,/^== all$/p' "$WORK/$stage.dpkg" | grep -v '^==' | sort -u >"$WORK/$stage.manual"
  sed -n '/^== all$/,$p' "$WORK/$stage.dpkg" | grep -v '^==' | sort -u >"$WORK/$stage.packages"
  # The build stage may hold a TEST package as a dependency of a BUILD one (cmake
  # depends on procps), never one of its own; a runtime image holds none at all.
  held="$WORK/$stage.packages"; [[ $stage == build-deps ]] && held="$WORK/$stage.manual"
  found=$(comm -12 "$held" "$WORK/forbid.$stage" | tr '\n' ' ')
  if [[ -n "$found" ]]; then
    echo "the $stage stage has packages outside its group in $GROUPS_FROM: $found" >>"$WORK/stage-errors"
  else
    echo "$stage stage: $(wc -l <"$WORK/$stage.packages") Debian packages, none outside its group"
  fi
done
[[ ! -s "$WORK/stage-errors" ]] || die "$(cat "$WORK/stage-errors")"
$ENGINE rmi "$DEPS_TAG" >/dev/null 2>&1 || true
# Every program's shared libraries are in its image (what the server links, and no more,
# is the server group; a missing one shows here, before a container needs it).
for tag in "$IMAGE" "$BUILDER_IMAGE"; do
  $ENGINE run --rm "$tag" sh -c 'for p in /usr/local/bin/*; do echo "== $p"; ldd "$p"; done' \
    >"$WORK/ldd.out" 2>&1 || { cat "$WORK/ldd.out"; die "ldd failed in $tag"; }
  ! grep -q 'not found' "$WORK/ldd.out" \
    || { grep -E '^==|not found' "$WORK/ldd.out"; die "$tag lacks shared libraries"; }
  echo "$tag: $(grep -c '^==' "$WORK/ldd.out") programs, every shared library present"
done
(( size <= SERVER_MAX_MB )) || die "the server image is $size MB, more than $SERVER_MAX_MB MB"
for tag in "$IMAGE" "$BUILDER_IMAGE"; do
  user=$($ENGINE image inspect --format '{{.Config.User}}' "$tag")
  [[ "$user" =~ ^[0-9]+:[0-9]+$ && "${user%%:*}" != 0 ]] || die "$tag: USER '$user' is not a numeric non-root uid:gid"
done
ports=$($ENGINE image inspect --format '{{range $p, $_ := .Config.ExposedPorts}}{{$p}} {{end}}' "$IMAGE")
echo "USER $user; EXPOSE $ports"
for p in 50051 8080; do [[ " $ports" == *" $p/tcp "* ]] || die "port $p (a server default) not EXPOSEd"; done
$ENGINE run --rm "$IMAGE" graphsieve-server --help >"$WORK/help.txt" 2>&1 || true
grep -q -- '--snapshot-root' "$WORK/help.txt" || { cat "$WORK/help.txt"; die "graphsieve-server does not run in the image"; }

step "5/8 generate an impression log (graphsieve-gen in the builder image)"
mkdir -p "$WORK/logs"
$ENGINE run --rm --user "$(id -u):$(id -g)" -v "$WORK/logs:/out" "$BUILDER_IMAGE" \
  graphsieve-gen --preset tiny --seed 7 --output /out/impressions.csv --quiet
echo "$(($(wc -l <"$WORK/logs/impressions.csv") - 1)) impressions"

step "6/8 builder container: log (read-only) -> snapshot volume $VOLUME"
$ENGINE volume create "$VOLUME" >/dev/null
$ENGINE run --rm -v "$WORK/logs:/logs:ro" -v "$VOLUME:/snapshots" "$BUILDER_IMAGE" \
  graphsieve-build --input /logs/impressions.csv --snapshot-root /snapshots --keep 3 --quiet \
  || die "the builder container failed"
V1=$($ENGINE run --rm -v "$VOLUME:/snapshots:ro" "$IMAGE" cat /snapshots/CURRENT)
# A second version (another alpha), the one CURRENT names; V1 is the rollback target.
# Built by two MPI ranks in the container, the log in two parts (alternate rows, each
# part with the header), as the MPIJob runs it (deploy/k8s-mpi).
awk -v dir="$WORK/logs" 'NR == 1 { print > (dir "/part-0.csv"); print > (dir "/part-1.csv"); next }
  { print > (dir "/part-" (NR % 2) ".csv") }' "$WORK/logs/impressions.csv"
$ENGINE run --rm -v "$WORK/logs:/logs:ro" -v "$VOLUME:/snapshots" "$BUILDER_IMAGE" \
  mpirun --oversubscribe -np 2 graphsieve-build --input /logs/part-0.csv,/logs/part-1.csv \
  --snapshot-root /snapshots --keep 3 --alpha 0.1 --quiet >"$WORK/mpirun.log" 2>&1 \
  || { cat "$WORK/mpirun.log"; die "the second builder run (mpirun -np 2) failed"; }
VERSION=$($ENGINE run --rm -v "$VOLUME:/snapshots:ro" "$IMAGE" cat /snapshots/CURRENT)
[[ "$VERSION" != "$V1" ]] || die "mpirun -np 2 published no new version"
echo "published $V1, then $VERSION (CURRENT, mpirun -np 2)"

step "7/8 server container; queries from the host"
CLI=${CLI:-$(for d in "$BINARIES" build-ci build; do
  [[ -n "$d" && -x "$d/client/graphsieve" ]] && { echo "$d/client/graphsieve"; break; }; done)}
[[ -n "$CLI" && -x "$CLI" ]] || die "no host CLI at $CLI: build it first (cmake --build build-ci --target graphsieve)"
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
# Output goes to a file before grep -q reads it: under pipefail, grep -q
# leaving a pipe early makes a writer with more lines to come fail (SIGPIPE).
"$CLI" status --server "127.0.0.1:$GRPC_PORT" >"$WORK/status.out"
grep -q "active version *$V1" "$WORK/status.out" || die "$V1 is not active after the pin"
$ENGINE run --rm -v "$VOLUME:/snapshots:ro" "$IMAGE" test -e "/snapshots/pins/$V1" \
  || die "no /snapshots/pins/$V1 after the pin (volume not writable by uid 10001?)"
echo "pin inside the container (exec): $V1 serves, pins/$V1 written"

step "8/8 SIGTERM: drain"
t0=$(date +%s)
$ENGINE stop --time 30 "$SERVER" >/dev/null
code=$($ENGINE inspect --format '{{.State.ExitCode}}' "$SERVER")
$ENGINE logs "$SERVER" >"$WORK/server.log" 2>&1
tail -4 "$WORK/server.log"
[[ "$code" == 0 ]] || die "server exited $code after SIGTERM"
grep -q 'draining' "$WORK/server.log" || die "no drain logged"
echo "drained and exited 0 in $(( $(date +%s) - t0 )) s"
echo
echo "docker-smoke: PASS ($ENGINE; server $IMAGE $size MB, builder $BUILDER_IMAGE $builder_size MB;" \
  "$(( $(date +%s) - T_START )) s)"
