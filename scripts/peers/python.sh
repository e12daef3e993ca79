#!/usr/bin/env bash
# Installs the pinned Python peers (requirements.txt) into ${SLUICE_CACHE}/venv. Does nothing
# when the venv already holds exactly these pins.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# `python.sh --check` exits 0 only when the venv holds exactly these pins.
want="$(sha256sum "${PEERS_DIR}/requirements.txt" | cut -d' ' -f1)"
installed() { stamp_matches python "${want}" && [[ -x "${SLUICE_VENV}/bin/python" ]]; }
if [[ "${1:-}" == "--check" ]]; then installed; exit; fi
installed && exit 0
echo "peers: installing the Python peers into ${SLUICE_VENV} (pinned in scripts/peers/requirements.txt)"
[[ -x "${SLUICE_VENV}/bin/python" ]] || python3 -m venv "${SLUICE_VENV}"
"${SLUICE_VENV}/bin/python" -m pip install -q --upgrade pip
"${SLUICE_VENV}/bin/python" -m pip install -q -r "${PEERS_DIR}/requirements.txt"
stamp_write python "${want}"
