#!/usr/bin/env bash
# `make run`: the streaming demo in examples/ on the embedded default (a local warehouse
# directory): writes a few JSON files of events, runs examples/pipeline.sql with `sluice run`
# (bronze -> silver -> gold streaming tables, AVAILABLE NOW, so it stops by itself), then shows
# the result and the progress of the micro-batches with `sluice sql`.
set -euo pipefail
SLUICE="$(cd "$(dirname "${1:-build/release/sluice}")" && pwd)/$(basename "${1:-build/release/sluice}")"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WAREHOUSE="${ROOT}/build/demo-warehouse"
rm -rf "${WAREHOUSE}"
mkdir -p "${WAREHOUSE}/landing/events"
cd "${WAREHOUSE}"

# 6 files x 500 events; write each file elsewhere and rename it in, as producers should.
pages=(home search product cart checkout)
for f in 1 2 3 4 5 6; do
  tmp="${WAREHOUSE}/landing/.events-${f}.tmp"
  : > "${tmp}"
  for i in $(seq 0 499); do
    id=$(( (f - 1) * 500 + i ))
    printf '{"id": %d, "user_id": "user-%d", "page": "%s", "amount": %d.%02d, "ts": "2026-01-01 00:%02d:%02d"}\n' \
      "${id}" $(( id * 7919 % 20 )) "${pages[$(( (id * 31 + id / 7) % 5 ))]}" $(( id % 90 + 10 )) $(( id % 100 )) \
      $(( id / 60 % 60 )) $(( id % 60 )) >> "${tmp}"
  done
  mv "${tmp}" "${WAREHOUSE}/landing/events/events-${f}.json"
done

echo "== sluice run examples/pipeline.sql --warehouse ${WAREHOUSE}"
"${SLUICE}" run "${ROOT}/examples/pipeline.sql" --warehouse "${WAREHOUSE}"

echo
echo "== the top users (sluice sql)"
"${SLUICE}" sql --warehouse "${WAREHOUSE}" \
  "SELECT user_id, checkouts, revenue FROM user_totals ORDER BY revenue DESC LIMIT 5"
echo
echo "== the micro-batches of bronze_events"
"${SLUICE}" sql --warehouse "${WAREHOUSE}" \
  "SELECT batch_id, num_input_rows, batch_duration_ms FROM streaming_progress('bronze_events') ORDER BY batch_id"
