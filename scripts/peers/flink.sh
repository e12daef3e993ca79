#!/usr/bin/env bash
# Installs Apache Flink (PyFlink, pinned in flink-requirements.txt) into ${SLUICE_CACHE}/flink-venv
# and its Kafka SQL connector (flink-kafka-jars.sh), for the peers benchmark (bench/peers) and its
# interop check. A step of `make peers` (scripts/peers.sh).
#   flink.sh           installs (a second run does nothing)
#   flink.sh --check   exits 0 only when both are installed as pinned
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
FLINK_VENV="${SLUICE_CACHE}/flink-venv"
want="$(sha256sum "${PEERS_DIR}/flink-requirements.txt" | cut -d' ' -f1)"
installed() { stamp_matches flink "${want}" && [[ -x "${FLINK_VENV}/bin/python" ]]; }
if [[ "${1:-}" == "--check" ]]; then
  if installed && "${PEERS_DIR}/flink-kafka-jars.sh" --check; then exit 0; fi
  echo "Flink is not installed as pinned in ${FLINK_VENV}: run scripts/peers/flink.sh" >&2
  exit 1
fi
[[ $# -eq 0 ]] || { echo "usage: flink.sh [--check]" >&2; exit 2; }
if ! installed; then
  echo "peers: installing Flink into ${FLINK_VENV} (pinned in scripts/peers/flink-requirements.txt)"
  [[ -x "${FLINK_VENV}/bin/python" ]] || python3 -m venv "${FLINK_VENV}"
  "${FLINK_VENV}/bin/python" -m pip install -q --upgrade pip
  "${FLINK_VENV}/bin/python" -m pip install -q -r "${PEERS_DIR}/flink-requirements.txt"
  stamp_write flink "${want}"
fi
"${PEERS_DIR}/flink-kafka-jars.sh"
