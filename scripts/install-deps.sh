#!/usr/bin/env bash
# Installs exactly the Debian 12 packages graphsieve needs to build, test and run.
# Used by the README's two commands, by .ci/run (scripts/test.sh) and by docker/Dockerfile.
# Idempotent: packages already present are skipped quickly.
#
# Usage:
#   scripts/install-deps.sh                   BUILD + TEST: build everything and run every test
#   scripts/install-deps.sh --build           BUILD only (docker/Dockerfile's build stage)
#   scripts/install-deps.sh --runtime server  SERVER_RUNTIME only (the server image)
#   scripts/install-deps.sh --runtime builder BUILDER_RUNTIME only (the builder image, with MPI)
#   scripts/install-deps.sh --image-tools     IMAGE_TOOLS (a container engine for the image checks)
#   scripts/install-deps.sh --print GROUP     print a group, one package a line, install nothing
#                                             (GROUP: build test image-tools server-runtime
#                                             builder-runtime; scripts/docker-smoke.sh checks
#                                             each image against these)
set -euo pipefail

# Each package is declared once, in the one group that says why it is needed. A new
# package goes into:
#   BUILD  if compiling the programs needs it (toolchain, headers, code generators);
#   TEST   if only tests, benchmarks, the Python client, scripts or the deploy/ checks
#          need it. No image holds a TEST package (scripts/docker-smoke.sh fails if one
#          does), so Python packages, browsers and tools for checks go here;
#   SERVER_RUNTIME / BUILDER_RUNTIME  if a program in that image loads it at run time
#          (the shared library a BUILD -dev package links to, under its runtime name).
BUILD=(
  build-essential cmake pkg-config ninja-build
  protobuf-compiler libprotobuf-dev              # protoc + protobuf runtime
  protobuf-compiler-grpc libgrpc++-dev           # grpc_cpp_plugin + gRPC C++ (health, reflection)
  libabsl-dev                                    # Abseil: Status, flags, Mutex, strings
  librocksdb-dev                                 # snapshot storage
  libeigen3-dev                                  # dense + sparse linear algebra
  libxxhash-dev                                  # stable 64-bit hash for string ids (XXH3_64bits)
  zlib1g-dev                                     # gzip input logs
  nlohmann-json3-dev                             # MANIFEST.json, --json summaries
  prometheus-cpp-dev libcivetweb-dev             # /metrics + admin HTTP (dashboard)
  libssl-dev                                     # the server checks --tls-key matches --tls-cert (libcrypto)
  openmpi-bin libopenmpi-dev                     # mpirun -np N graphsieve-build (docs/SCALING.md)
)

TEST=(
  libgtest-dev libgmock-dev                      # tests
  clang-format-14                                # scripts/check-format.sh (CI fails on unformatted lines)
  clang libclang-rt-14-dev                       # FUZZ_SECONDS=N scripts/test.sh: libFuzzer targets (clang, its fuzzer and sanitizer runtimes)
  python3 python3-grpcio python3-grpc-tools python3-protobuf  # Python client + its test
  python3-xxhash                                 # Python client: routing by core/io/partition.h
  python3-venv                                   # Python client: `pip install ./client/python` into a venv
  python3-pandas python3-numpy                   # Python client's DataFrame/array path (optional at run time) and its tests
  python3-torch python3-xgboost python3-sklearn  # training examples and their tests (client/python/examples, docs/TRAINING.md)
  mypy                                           # tests: the Python client's type hints (client_python_typecheck_test)
  openssl                                        # server TLS test makes self-signed certs
  curl procps                                    # end-to-end scripts (admin HTTP, RSS)
  chromium                                       # the dashboard test renders the page in a real browser
  prometheus prometheus-alertmanager             # promtool, amtool: deploy/ rules, alert tests, configs (tests/deploy)
  kubernetes-client                              # kubectl kustomize (tests/deploy)
  nodejs npm                                     # Kubernetes schema check (tests/deploy)
)

# The image checks (scripts/docker-smoke.sh, scripts/image-check.sh): Docker's engine
# and debootstrap for the debian:12-slim base when no registry serves it.
IMAGE_TOOLS=(docker.io debootstrap)

# The runtime groups are the shared libraries the image's programs link (`ldd`), by
# package name. RocksDB is linked statically: its compression libraries, not librocksdb7.8.
# graphsieve-server and the graphsieve CLI (operator actions inside the pod).
SERVER_RUNTIME=(
  libgrpc++1.51 libprotobuf32 libabsl20220623 libxxhash0 libprometheus-cpp-core1.0 libcivetweb1
  libsnappy1v5 liblz4-1 libzstd1 libbz2-1.0 zlib1g libssl3
)

# graphsieve-build (linked with Open MPI; mpirun), graphsieve-gen and graphsieve-eval.
BUILDER_RUNTIME=(
  libabsl20220623 libxxhash0 libsnappy1v5 liblz4-1 libzstd1 libbz2-1.0 zlib1g
  libopenmpi3 openmpi-bin
  libssl3                                        # mpirun's ssh launcher (openssh-client, an openmpi-bin dependency) links it
)

# group NAME: the group's packages into PACKAGES, or a usage error.
group() {
  case "$1" in
    build) PACKAGES=("${BUILD[@]}") ;;
    test) PACKAGES=("${TEST[@]}") ;;
    image-tools) PACKAGES=("${IMAGE_TOOLS[@]}") ;;
    server-runtime) PACKAGES=("${SERVER_RUNTIME[@]}") ;;
    builder-runtime) PACKAGES=("${BUILDER_RUNTIME[@]}") ;;
    *) echo "install-deps: unknown group '$1' (build test image-tools server-runtime builder-runtime)" >&2
       exit 2 ;;
  esac
}

IMAGE_STAGE=0  # an image stage: the apt lists are removed afterwards
case "${1:-}" in
  "")
    PACKAGES=("${BUILD[@]}")
    # kubectl and npm are preinstalled on some machines of this kind (not as Debian
    # packages); Debian's only where they are missing.
    for p in "${TEST[@]}"; do
      [[ $p == kubernetes-client ]] && command -v kubectl >/dev/null && continue
      [[ $p == nodejs || $p == npm ]] && command -v npm >/dev/null && continue
      PACKAGES+=("$p")
    done ;;
  --build) PACKAGES=("${BUILD[@]}"); IMAGE_STAGE=1 ;;
  --runtime)
    [[ "${2:-}" == server || "${2:-}" == builder ]] || { echo "usage: $0 --runtime server|builder" >&2; exit 2; }
    group "$2-runtime"; IMAGE_STAGE=1 ;;
  --image-tools) PACKAGES=("${IMAGE_TOOLS[@]}") ;;
  --print)
    group "${2:-}"
    printf '%s\n' "${PACKAGES[@]}"
    exit 0 ;;
  *) echo "usage: $0 [--build | --runtime server|builder | --image-tools | --print GROUP]" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} Debian packages present"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  if ((IMAGE_STAGE)); then $SUDO rm -rf /var/lib/apt/lists/*; fi
fi

# npm packages of the deploy/ checks (tests/deploy), at the versions of its
# package-lock.json; once installed, the checks run offline.
DEPLOY_DIR="$(dirname "$0")/../tests/deploy"
if [[ -z "${1:-}" && -f "$DEPLOY_DIR/package-lock.json" && ! -d "$DEPLOY_DIR/node_modules" ]]; then
  echo "install-deps: npm ci in tests/deploy"
  npm ci --prefix "$DEPLOY_DIR" --no-audit --no-fund --loglevel=error
fi
