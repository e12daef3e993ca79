#!/usr/bin/env bash
# Installs what building and testing Sluice needs on Debian 12, then fetches DuckDB.
# Safe to run repeatedly: it installs only the packages that are missing and says which.
# Runs apt-get through sudo when not root.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

PACKAGES=(
  build-essential g++ cmake ninja-build ccache pkg-config git ca-certificates
  libgtest-dev libgmock-dev libbenchmark-dev
  librocksdb-dev kcat liblz4-dev libzstd-dev
  nlohmann-json3-dev libsimdjson-dev libcli11-dev libcpp-httplib-dev
  libedit-dev libssl-dev zlib1g-dev
  clang-format clang-14 clang-tidy-14
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc python3 python3-pip
)

missing=()
# Node.js/npm may come from outside Debian (as on the CI image); only install Debian's when absent.
command -v npm >/dev/null || missing+=(npm)
# cargo fetches librdkafka's source (scripts/librdkafka.sh); rustup's counts too.
command -v cargo >/dev/null || missing+=(cargo)
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "${pkg}" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("${pkg}")
  fi
done

if ((${#missing[@]} > 0)); then
  SUDO=""
  if [[ "$(id -u)" != "0" ]]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO="sudo"
  fi
  echo "setup: installing Debian packages: ${missing[*]}"
  ${SUDO} apt-get update -qq
  DEBIAN_FRONTEND=noninteractive ${SUDO} apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

"${ROOT}/scripts/fetch-duckdb.sh"
# librdkafka >= 2.6.1, built once into the cache (CMake runs it too).
"${ROOT}/scripts/librdkafka.sh" >/dev/null
