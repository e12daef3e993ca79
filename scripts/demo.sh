#!/usr/bin/env bash
# `make run`: runs the demo in examples/ on the embedded default (a local warehouse directory).
set -euo pipefail
SLUICE="${1:-build/release/sluice}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WAREHOUSE="${ROOT}/build/demo-warehouse"
rm -rf "${WAREHOUSE}"
echo "== sluice sql --warehouse ${WAREHOUSE} -f examples/demo.sql"
"${SLUICE}" sql --warehouse "${WAREHOUSE}" -f "${ROOT}/examples/demo.sql"
