#!/usr/bin/env bash
# Fails, naming `make peers`, unless every peer is installed as pinned. Targets that need the peers
# (make interop, make fixtures) run it first.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
missing=()
stamp_matches python "$(sha256sum "${PEERS_DIR}/requirements.txt" | cut -d' ' -f1)" || missing+=(python)
stamp_matches spark-jars "$(cat "${PEERS_DIR}/spark-jars.pom.xml" "${PEERS_DIR}/spark-jars.sh" | sha256sum | cut -d' ' -f1)" || missing+=(spark-jars)
if [[ -f "${PEERS_DIR}/kafka-jars.sh" ]]; then
  "${PEERS_DIR}/kafka-jars.sh" --check >/dev/null 2>&1 || missing+=(kafka)
fi
if ((${#missing[@]} > 0)); then
  echo "the peers are missing or not as pinned (${missing[*]}) in ${SLUICE_CACHE}: run \`make peers\`" >&2
  exit 1
fi
