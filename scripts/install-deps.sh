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
  python3 python3-grpcio python3-grpc-tools python3-protobuf  # Python client + its test
  python3-xxhash  # Python client: routing by core/io/partition.h
  openssl                                        # server TLS test makes self-signed certs
  curl procps                                    # end-to-end scripts (admin HTTP, RSS)
  chromium                                       # the dashboard test renders the page in a real browser
)

# --runtime: only the shared libraries the binaries need (docker/Dockerfile's runtime stage).
if [[ "${1:-}" == "--runtime" ]]; then
  PACKAGES=(libgrpc++1.51 libprotobuf32 librocksdb7.8 libabsl20220623 libxxhash0 zlib1g
            libprometheus-cpp-core1.0 libcivetweb1 ca-certificates)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} Debian packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
if [[ "${1:-}" == "--runtime" ]]; then $SUDO rm -rf /var/lib/apt/lists/*; fi
