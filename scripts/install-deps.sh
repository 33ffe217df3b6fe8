#!/usr/bin/env bash
# Installs the Debian 12 packages Crescent needs to build, test and benchmark.
# Idempotent: packages already present are skipped, and apt is not touched at all
# when nothing is missing. Run as root or with sudo available.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake pkg-config git
  # build speed, each used only when present (cmake/BuildSpeed.cmake)
  ccache mold
  # libraries: hashing, keyed hashing (SipHash), zstd (master snapshots), Abseil, JSON,
  # command-line parsing
  libxxhash-dev libsodium-dev libzstd-dev libabsl-dev nlohmann-json3-dev libcli11-dev
  # networking: gRPC control plane, Asio data plane, HMAC capabilities and TLS, admin HTTP
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libasio-dev libssl-dev libcpp-httplib-dev
  # the persistent tier: file-backed segments (DAX or ordinary files)
  libpmem2-dev
  # peer benchmarks: a real redis-server driven through hiredis
  libhiredis-dev redis-server
  # etcd (the etcd client's tests run real members; the chaos checker reads the
  # cluster's log with etcdctl)
  etcd-server etcd-client
  # the Python binding and the end-to-end harness (system interpreter /usr/bin/python3)
  pybind11-dev python3-dev python3-numpy python3-pytest python3-torch
  # the wheel (make wheel): PEP 517 front end, setuptools backend, venv for its test
  python3-build python3-setuptools python3-wheel python3-venv
  # the E2E harness's Redis-backed L3 store (make e2e): the Redis client
  python3-redis
  # tests and benchmarks (openssl: the TLS tests' certificates, scripts/bench_control.py)
  libgtest-dev libgmock-dev libbenchmark-dev librapidcheck-dev openssl
  # style
  clang-format clang-tidy
  # fuzzing (make fuzz): clang and its runtimes, libFuzzer among them
  clang libclang-rt-14-dev
  # the chaos checker's multi-host cluster: `ip netns`, veth pairs, a bridge
  iproute2
  # the status page's test in a real browser (headless), and `make screenshot`
  chromium
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
