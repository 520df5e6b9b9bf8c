#!/usr/bin/env bash
# Installs exactly the Debian 12 packages graphsieve needs to build, test and run.
# Used by the README's two commands, by .ci/run and by docker/Dockerfile.
# Idempotent: packages already present are skipped quickly.
set -euo pipefail

PACKAGES=(
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
  libgtest-dev libgmock-dev                      # tests
  clang-format-14                                # scripts/check-format.sh (CI fails on unformatted lines)
  python3 python3-grpcio python3-grpc-tools python3-protobuf  # Python client + its test
  python3-xxhash  # Python client: routing by core/io/partition.h
  python3-venv python3-pandas python3-numpy  # Python client: `pip install ./client/python` into a venv (python3-venv); its DataFrame/array path and tests (pandas, numpy)
  mypy  # tests: the Python client's type hints (client_python_typecheck_test)
  openssl                                        # server TLS test makes self-signed certs
  curl procps                                    # end-to-end scripts (admin HTTP, RSS)
  chromium                                       # the dashboard test renders the page in a real browser
  prometheus prometheus-alertmanager             # promtool, amtool: deploy/ rules, alert tests, configs (tests/deploy)
  openmpi-bin libopenmpi-dev                     # mpirun -np N graphsieve-build (docs/SCALING.md)
)
# Not Debian packages on every machine of this kind (preinstalled there); Debian's as a fallback.
command -v kubectl >/dev/null || PACKAGES+=(kubernetes-client)  # kubectl kustomize (tests/deploy)
command -v npm >/dev/null || PACKAGES+=(nodejs npm)              # Kubernetes schema check (tests/deploy)

# --build: toolchain and -dev libraries only, no test tools (docker/Dockerfile's build stage).
if [[ "${1:-}" == "--build" ]]; then
  TEST_ONLY=" libgtest-dev libgmock-dev clang-format-14 python3 python3-grpcio python3-grpc-tools python3-protobuf "
  TEST_ONLY+=" openssl curl procps chromium prometheus prometheus-alertmanager kubernetes-client nodejs npm "
  BUILD=()
  for p in "${PACKAGES[@]}"; do [[ "$TEST_ONLY" == *" $p "* ]] || BUILD+=("$p"); done
  PACKAGES=("${BUILD[@]}")
fi

# --runtime: only the shared libraries the binaries need (docker/Dockerfile's runtime stage).
if [[ "${1:-}" == "--runtime" ]]; then
  PACKAGES=(libgrpc++1.51 libprotobuf32 librocksdb7.8 libabsl20220623 libxxhash0 zlib1g
            libprometheus-cpp-core1.0 libcivetweb1 ca-certificates libopenmpi3 openmpi-bin)
fi

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
  if [[ "${1:-}" == --runtime || "${1:-}" == --build ]]; then $SUDO rm -rf /var/lib/apt/lists/*; fi
fi

# npm packages of the deploy/ checks (tests/deploy), at the versions of its
# package-lock.json; once installed, the checks run offline.
DEPLOY_DIR="$(dirname "$0")/../tests/deploy"
if [[ -z "${1:-}" && -f "$DEPLOY_DIR/package-lock.json" && ! -d "$DEPLOY_DIR/node_modules" ]]; then
  echo "install-deps: npm ci in tests/deploy"
  npm ci --prefix "$DEPLOY_DIR" --no-audit --no-fund --loglevel=error
fi
