#!/usr/bin/env bash
# `sluice bench nexmark --check` fails, naming the difference, when the streaming result and the
# batch reference differ: q2 against a batch file that selects other auctions.
# Usage: check_detects_mismatch.sh SLUICE QUERIES_DIR
set -euo pipefail
SLUICE="$1"
QUERIES="$2"
dir="$(mktemp -d)"
trap 'rm -rf "${dir}"' EXIT
cp "${QUERIES}/q2.sql" "${dir}/q2.sql"
sed 's/auction % 123 = 0/auction % 124 = 0/' "${QUERIES}/q2.batch.sql" > "${dir}/q2.batch.sql"
if "${SLUICE}" bench nexmark --query q2 --events 5000 --rate 500 --batch-events 1000 \
    --source table --check --queries "${dir}" > "${dir}/out" 2> "${dir}/err"; then
  echo "FAIL: --check passed with a wrong batch reference"; cat "${dir}/out"; exit 1
fi
grep -q "differs from the batch result" "${dir}/err" || { echo "FAIL: no error"; cat "${dir}/err"; exit 1; }
grep -q "batch rows missing from the stream" "${dir}/out" || { echo "FAIL: no diff"; cat "${dir}/out"; exit 1; }
# And the unchanged files pass.
"${SLUICE}" bench nexmark --query q2 --events 5000 --rate 500 --batch-events 1000 \
  --source table --check --queries "${QUERIES}" | grep -q "check              ok"
echo "ok"
