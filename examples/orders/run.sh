#!/usr/bin/env bash
# Runs the orders pipeline (pipeline.sql) end to end on one machine: starts librdkafka's mock
# Kafka cluster (sluice_mock_kafka), produces ROUNDS rounds of order events with duplicates,
# out-of-order and malformed records (generate_events.sh) with kcat, runs `sluice run` over the
# rendered pipeline and prints silver, the dead letters and gold.
#
# Usage: examples/orders/run.sh [build dir (default build/release)] [rounds (3)] [orders (20)]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BUILD="$(realpath "${1:-build/release}")"
ROUNDS="${2:-3}"
ORDERS="${3:-20}"
SLUICE="${BUILD}/sluice"
MOCK="${BUILD}/src/sources/kafka/sluice_mock_kafka"
command -v kcat > /dev/null || { echo "kcat is missing: apt install kcat"; exit 1; }
WORK="$(mktemp -d)"
# shellcheck source=../../scripts/mock-kafka.sh
source "${HERE}/../../scripts/mock-kafka.sh"
cleanup() {
  stop_mock_kafka
  rm -rf "${WORK}"
}
trap cleanup EXIT
cd "${WORK}"
start_mock_kafka "${MOCK}" orders:3
BOOTSTRAP="${KAFKA_BOOTSTRAP}"
echo "mock Kafka cluster at ${BOOTSTRAP}"
for ((r = 0; r < ROUNDS; r++)); do
  "${HERE}/generate_events.sh" "${r}" "${ORDERS}" valid.json | kcat -P -b "${BOOTSTRAP}" -t orders -K:
done
sed "s|@KAFKA_BOOTSTRAP@|${BOOTSTRAP}|" "${HERE}/pipeline.sql" > pipeline.sql
"${SLUICE}" run pipeline.sql --warehouse wh
for q in "SELECT * FROM orders_silver ORDER BY order_id LIMIT 10" \
         "SELECT \`partition\`, \`offset\`, error, bad_payload FROM orders_dlq ORDER BY 1, 2" \
         "SELECT * FROM revenue_by_customer ORDER BY customer"; do
  echo "> ${q}"
  "${SLUICE}" sql --warehouse wh "${q}"
done
