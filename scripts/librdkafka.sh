#!/usr/bin/env bash
# librdkafka.sh: makes sure the pinned librdkafka that Sluice links is built, then prints its
# install prefix (the only line on stdout; progress goes to stderr). CMake runs it at configure
# time (cmake/Rdkafka.cmake) and scripts/setup.sh runs it, so `make test` and `make run` on a fresh
# clone build it by themselves. A second run does nothing but print the prefix.
#
# Why not Debian's: bookworm's librdkafka is 2.0.2, whose SCRAM client-final-message Kafka 4
# brokers refuse (librdkafka issue 4895, fixed in 2.6.1). The source comes from the crates.io crate
# rdkafka-sys, which vendors librdkafka's release tree; cargo fetches it (the crate's sha256 is
# pinned below and checked), and it is built once with librdkafka's own configure into
#   ${XDG_CACHE_HOME:-~/.cache}/sluice/librdkafka-<version>/{include,lib}
# as a static library (lib/librdkafka.a), outside the clone so that every clone and CI reuse it.
# Features as Debian's build has them, less Cyrus SASL (GSSAPI) and libcurl (OIDC): SSL, SASL
# PLAIN / SCRAM / OAUTHBEARER (built in), zstd, lz4 (Debian's liblz4), snappy (built in), zlib.
set -euo pipefail

LIBRDKAFKA_VERSION="2.12.1"
CRATE="rdkafka-sys"
CRATE_VERSION="4.10.0+${LIBRDKAFKA_VERSION}"
CRATE_SHA256="e234cf318915c1059d4921ef7f75616b5219b10b46e9f3a511a15eb4b56a3f77"

CACHE="${SLUICE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sluice}"
PREFIX="${CACHE}/librdkafka-${LIBRDKAFKA_VERSION}"
STAMP="${PREFIX}/.built"
# What the stamp holds: a change of version or of the configure line rebuilds.
CONFIGURE_ARGS=(--disable-gssapi --disable-curl --enable-ssl --enable-zstd --enable-zlib
                --enable-lz4-ext --enable-regex-ext)
WANT="${CRATE_VERSION} ${CRATE_SHA256} ${CONFIGURE_ARGS[*]}"

log() { echo "librdkafka.sh: $*" >&2; }

installed() {
  [[ -f "${STAMP}" && "$(cat "${STAMP}")" == "${WANT}" && -f "${PREFIX}/lib/librdkafka.a" &&
     -f "${PREFIX}/include/librdkafka/rdkafka.h" && -f "${PREFIX}/include/librdkafka/rdkafka_mock.h" ]]
}

if installed; then
  echo "${PREFIX}"
  exit 0
fi

mkdir -p "${CACHE}"
# One builder at a time (two configures of two build directories may start together).
exec 9>"${CACHE}/.librdkafka.lock"
flock 9
if installed; then
  echo "${PREFIX}"
  exit 0
fi

command -v cargo >/dev/null ||
  { log "cargo is required to fetch librdkafka's source (scripts/setup.sh installs it)"; exit 1; }
command -v make >/dev/null || { log "make is required (apt-get install build-essential)"; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/sluice-librdkafka-XXXXXX")"
trap 'rm -rf "${work}"' EXIT
start="$(date +%s)"

# cargo fetch of a one-dependency package downloads the crate into cargo's registry cache
# (cargo checks it against the index's checksum; this script checks the pinned sha256 again).
log "fetching ${CRATE} ${CRATE_VERSION} (librdkafka ${LIBRDKAFKA_VERSION}'s source) with cargo"
mkdir -p "${work}/fetch/src"
cat > "${work}/fetch/Cargo.toml" <<EOF
[package]
name = "sluice-librdkafka-fetch"
version = "0.0.0"
edition = "2021"

[dependencies]
${CRATE} = { version = "=${CRATE_VERSION}", default-features = false }
EOF
: > "${work}/fetch/src/lib.rs"
(cd "${work}/fetch" && cargo fetch --quiet --target x86_64-unknown-linux-gnu) >&2
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
crate_file="$(compgen -G "${cargo_home}/registry/cache/*/${CRATE}-${CRATE_VERSION}.crate" | head -n 1 || true)"
[[ -n "${crate_file}" ]] ||
  { log "cargo fetch did not leave ${CRATE}-${CRATE_VERSION}.crate in ${cargo_home}/registry/cache"; exit 1; }
got="$(sha256sum "${crate_file}" | cut -d' ' -f1)"
if [[ "${got}" != "${CRATE_SHA256}" ]]; then
  log "sha256 mismatch for ${crate_file}: got ${got}, want ${CRATE_SHA256}"
  exit 1
fi
tar xzf "${crate_file}" -C "${work}"
src="${work}/${CRATE}-${CRATE_VERSION}/librdkafka"
[[ -x "${src}/configure" ]] || { log "${crate_file} has no librdkafka/configure"; exit 1; }

# Build into a staging prefix, then move it into place, so that an interrupted build never
# leaves a half-installed prefix that the stamp check could mistake for a whole one.
stage="${PREFIX}.tmp.$$"
rm -rf "${stage}"
log "building librdkafka ${LIBRDKAFKA_VERSION} into ${PREFIX} (once; a few minutes)"
(
  cd "${src}"
  ./configure --prefix="${PREFIX}" "${CONFIGURE_ARGS[@]}" > "${work}/configure.log" 2>&1 ||
    { cat "${work}/configure.log" >&2; exit 1; }
  make -C src -j "$(nproc)" librdkafka.a > "${work}/make.log" 2>&1 ||
    { tail -n 50 "${work}/make.log" >&2; exit 1; }
) || { log "building librdkafka failed"; exit 1; }

mkdir -p "${stage}/lib" "${stage}/include/librdkafka"
cp "${src}/src/librdkafka.a" "${stage}/lib/"
cp "${src}/src/rdkafka.h" "${src}/src/rdkafka_mock.h" "${stage}/include/librdkafka/"
# The libraries the static archive needs, as configure found them (for cmake/Rdkafka.cmake).
sed -n 's/^MKL_DYNAMIC_LIBS=[[:space:]]*//p' "${src}/Makefile.config" > "${stage}/lib/librdkafka.libs"
[[ -s "${stage}/lib/librdkafka.libs" ]] || { log "no MKL_DYNAMIC_LIBS in ${src}/Makefile.config"; exit 1; }
cp "${src}/LICENSES.txt" "${stage}/"
echo "${WANT}" > "${stage}/.built"
rm -rf "${PREFIX}"
mv "${stage}" "${PREFIX}"
log "librdkafka ${LIBRDKAFKA_VERSION} built in $(($(date +%s) - start)) s: ${PREFIX}"
echo "${PREFIX}"
