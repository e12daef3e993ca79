#!/usr/bin/env bash
# run-python.sh ARGS...: runs the peers' Python (the venv of `make peers`) with ARGS, or fails
# naming `make peers`. ctest runs the interop suites through it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
if [[ ! -x "${SLUICE_VENV}/bin/python" ]]; then
  echo "the peers are not installed (no ${SLUICE_VENV}): run \`make peers\`" >&2
  exit 1
fi
exec "${SLUICE_VENV}/bin/python" "$@"
