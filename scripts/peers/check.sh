#!/usr/bin/env bash
# Fails, naming `make peers`, unless every peer is installed as pinned. Targets that need the peers
# (make interop, make fixtures) run it first.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
missing=()
for step in python spark-jars spark-kafka-jars kafka-jars flink kubernetes-check; do
  "${PEERS_DIR}/${step}.sh" --check >/dev/null 2>&1 || missing+=("${step}")
done
if ((${#missing[@]} > 0)); then
  echo "the peers are missing or not as pinned (${missing[*]}) in ${SLUICE_CACHE}: run \`make peers\`" >&2
  exit 1
fi
