#!/usr/bin/env bash
# Builds deploy/kubernetes/check (Kubernetes' own API types reading the manifests of
# deploy/kubernetes/) into ${SLUICE_CACHE}/bin/kubernetes-check with Go, once. Its modules and build
# cache stay in ${SLUICE_CACHE}/go, outside the clone.
#   kubernetes-check.sh           installs (a second run does nothing)
#   kubernetes-check.sh --check   exits 0 only when built from the current sources
# The stamp (${SLUICE_CACHE}/stamps/kubernetes-check: the sources' sha256) is written last.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
SRC="$(cd "${PEERS_DIR}/../../deploy/kubernetes/check" && pwd)"
BIN="${SLUICE_CACHE}/bin/kubernetes-check"
want="$(cat "${SRC}/go.mod" "${SRC}/go.sum" "${SRC}/main.go" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"
installed() { stamp_matches kubernetes-check "${want}" && [[ -x "${BIN}" ]]; }
if [[ "${1:-}" == "--check" && $# -eq 1 ]]; then
  installed && exit 0
  echo "the Kubernetes manifest checker is not built as pinned in ${BIN}: run \`make peers\`" >&2
  exit 1
fi
[[ $# -eq 0 ]] || { echo "usage: kubernetes-check.sh [--check]" >&2; exit 2; }
installed && exit 0
command -v go >/dev/null || { echo "peers: Go (go) is needed to build ${SRC}" >&2; exit 1; }
echo "peers: building the Kubernetes manifest checker (k8s.io/api, go.mod) into ${BIN}"
rm -f "${SLUICE_CACHE}/stamps/kubernetes-check"
mkdir -p "${SLUICE_CACHE}/bin"
(cd "${SRC}" && GOMODCACHE="${SLUICE_CACHE}/go/mod" GOCACHE="${SLUICE_CACHE}/go/build" \
  GOFLAGS=-mod=readonly go build -o "${BIN}.tmp" . && mv "${BIN}.tmp" "${BIN}")
stamp_write kubernetes-check "${want}"
