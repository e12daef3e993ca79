#!/usr/bin/env bash
# Fetches DuckDB 1.4.4 (prebuilt libduckdb.so + matching C++ headers) from the npm registry with
# `npm pack`, checks sha256 sums, and unpacks into third_party/duckdb/{include,lib}.
# Idempotent: does nothing when the stamp file says this exact version is already unpacked.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${ROOT}/third_party/duckdb"
STAMP="${DEST}/.version"
VERSION="1.4.4"
HEADERS_PKG="duckdb@${VERSION}"
HEADERS_TGZ="duckdb-${VERSION}.tgz"
HEADERS_SHA256="5bb967dcbcd517670ba5f169f238fb9d6787e53752c60ebe24386169d76941ed"
LIB_PKG="@duckdb/node-bindings-linux-x64@${VERSION}-r.1"
LIB_TGZ="duckdb-node-bindings-linux-x64-${VERSION}-r.1.tgz"
LIB_SHA256="8ac460b152cd05a95065a414879bb09e40534b1fb7a80a7afe6969b6ce039029"

if [[ -f "${STAMP}" && "$(cat "${STAMP}")" == "${VERSION}" && -f "${DEST}/lib/libduckdb.so" &&
      -f "${DEST}/include/yyjson.hpp" && -f "${DEST}/include/fmt/format.h" ]]; then
  exit 0
fi
command -v npm >/dev/null || { echo "fetch-duckdb: npm is required (apt-get install npm)" >&2; exit 1; }

WORK="$(mktemp -d)"
trap 'rm -rf "${WORK}"' EXIT
echo "fetch-duckdb: npm pack ${HEADERS_PKG} ${LIB_PKG}"
(cd "${WORK}" && npm pack --silent "${HEADERS_PKG}" "${LIB_PKG}" >/dev/null)

check() {
  local file="$1" want="$2" got
  got="$(sha256sum "${WORK}/${file}" | cut -d' ' -f1)"
  if [[ "${got}" != "${want}" ]]; then
    echo "fetch-duckdb: sha256 mismatch for ${file}: got ${got}, want ${want}" >&2
    exit 1
  fi
}
check "${HEADERS_TGZ}" "${HEADERS_SHA256}"
check "${LIB_TGZ}" "${LIB_SHA256}"

mkdir -p "${WORK}/h" "${WORK}/l"
tar xzf "${WORK}/${HEADERS_TGZ}" -C "${WORK}/h"
tar xzf "${WORK}/${LIB_TGZ}" -C "${WORK}/l"

rm -rf "${DEST}"
mkdir -p "${DEST}/include" "${DEST}/lib"
cp -r "${WORK}/h/package/src/duckdb/src/include/." "${DEST}/include/"
# Extension headers (parquet, json) for footer/statistics access inside src/engine.
for ext in parquet json; do
  if [[ -d "${WORK}/h/package/src/duckdb/extension/${ext}/include" ]]; then
    cp -r "${WORK}/h/package/src/duckdb/extension/${ext}/include/." "${DEST}/include/"
  fi
done
# DuckDB's own yyjson (namespace duckdb_yyjson, exported by libduckdb.so): src/engine/json_decoder.cc
# parses JSON with the very parser and flags of DuckDB's JSON functions; DuckDB's fmt headers are
# needed by its decimal cast header.
cp "${WORK}/h/package/src/duckdb/third_party/yyjson/include/yyjson.hpp" "${DEST}/include/"
cp -r "${WORK}/h/package/src/duckdb/third_party/fmt/include/fmt" "${DEST}/include/"
cp "${WORK}/l/package/libduckdb.so" "${DEST}/lib/"
echo "${VERSION}" > "${STAMP}"
echo "fetch-duckdb: DuckDB ${VERSION} in ${DEST}"
