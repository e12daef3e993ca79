#!/usr/bin/env bash
# End-to-end crash test of the headline pipeline (issue 6, examples/orders/pipeline.sql): order
# events with duplicates, out-of-order and malformed records are produced into a mock Kafka
# cluster (its own process) round by round while `sluice run` of the whole pipeline is killed
# with SIGKILL at random moments and restarted. After a final clean run:
#   - orders_silver holds exactly the latest valid state of every order (cancelled ones absent),
#   - orders_dlq holds exactly the malformed records and those without an order_id, each once,
#   - revenue_by_customer equals the aggregate of orders_silver.
#
# With a fifth argument, the path of examples/orders/orders_pipeline (the same pipeline written
# with the C++ API, silver by a foreachBatch MERGE), that program is run and killed instead of
# `sluice run pipeline.sql`; the checks are the same.
#
# Usage: orders_pipeline_crash.sh <sluice> <sluice_mock_kafka> [kills (default 5)] [seed]
#                                 [orders_pipeline]
set -uo pipefail
SLUICE="$(realpath "$1")"
MOCK="$(realpath "$2")"
KILLS="${3:-5}"
RANDOM="${4:-$$}"
CPP_PIPELINE="${5:+$(realpath "$5")}"
EXAMPLE="$(cd "$(dirname "$0")/../../examples/orders" && pwd)"
command -v kcat > /dev/null || { echo "FAIL: kcat is not installed (apt install kcat)"; exit 1; }
WORK="$(mktemp -d)"
# shellcheck source=../../scripts/mock-kafka.sh
source "$(dirname "$0")/../../scripts/mock-kafka.sh"
cleanup() {
  stop_mock_kafka
  rm -rf "${WORK}"
}
trap cleanup EXIT
cd "${WORK}"
start_mock_kafka "${MOCK}" orders:3 || { echo "FAIL: see above"; exit 1; }
BOOTSTRAP="${KAFKA_BOOTSTRAP}"
sed "s|@KAFKA_BOOTSTRAP@|${BOOTSTRAP}|" "${EXAMPLE}/pipeline.sql" > pipeline.sql
KILL_WINDOW_MS=3000
[[ -n "${CPP_PIPELINE}" ]] && KILL_WINDOW_MS=800
if [[ -n "${CPP_PIPELINE}" ]]; then
  RUN=("${CPP_PIPELINE}" --bootstrap "${BOOTSTRAP}" --warehouse wh)
else
  RUN=("${SLUICE}" run pipeline.sql --warehouse wh)
fi

ORDERS=40
rounds=0
produce() {
  "${EXAMPLE}/generate_events.sh" "${rounds}" "${ORDERS}" valid.json |
    kcat -P -b "${BOOTSTRAP}" -t orders -K: 2>> kcat.log ||
    { echo "FAIL: kcat could not produce:"; cat kcat.log; exit 1; }
  rounds=$((rounds + 1))
}

killed=0
for ((attempt = 0; killed < KILLS && attempt < 4 * KILLS; attempt++)); do
  produce
  "${RUN[@]}" > run.log 2>&1 &
  pid=$!
  # The whole pipeline takes a few seconds (the C++ program under one): kill anywhere in it.
  ms=$((RANDOM % KILL_WINDOW_MS))
  sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
  if kill -9 "${pid}" 2> /dev/null; then killed=$((killed + 1)); fi
  wait "${pid}" 2> /dev/null
  code=$?
  if [[ ${code} -ne 0 && ${code} -ne 137 ]]; then
    echo "FAIL: attempt ${attempt}: the pipeline exited ${code} (not a kill):"; cat run.log; exit 1
  fi
done
produce
if ! "${RUN[@]}" > run.log 2>&1; then
  echo "FAIL: the final run failed:"; cat run.log; exit 1
fi

check() {  # check <what> <query giving one value> <expected value>
  local got
  got="$("${SLUICE}" sql --warehouse wh --format csv "$2" 2>&1 | tail -n 1 | tr -d '\r"')"
  if [[ "${got}" != "$3" ]]; then
    echo "FAIL: ${1}: got '${got}', want '$3'"
    exit 1
  fi
  echo "ok: ${1} (${got})"
}
EXPECTED="WITH e AS (SELECT * FROM read_json('valid.json', columns = {order_id: 'BIGINT',
  customer: 'VARCHAR', status: 'VARCHAR', amount: 'DOUBLE', ts: 'TIMESTAMPTZ'})),
  latest AS (SELECT * FROM e QUALIFY row_number() OVER (PARTITION BY order_id ORDER BY ts DESC) = 1)
  SELECT order_id, customer, status, amount, ts FROM latest WHERE status <> 'cancelled'"
check "silver rows" "SELECT count(*) FROM orders_silver" \
  "$("${SLUICE}" sql --warehouse wh --format csv "SELECT count(*) FROM (${EXPECTED})" |
     tail -n 1 | tr -d '\r"')"
check "silver = the latest valid state of every order" \
  "SELECT count(*) FROM ((SELECT * FROM orders_silver EXCEPT ALL (${EXPECTED}))
                         UNION ALL ((${EXPECTED}) EXCEPT ALL SELECT * FROM orders_silver))" "0"
check "dead letters, each once" \
  "SELECT count(*) || ',' || count(DISTINCT (partition, offset)) || ',' ||
          count(*) FILTER (WHERE error = 'malformed JSON') FROM orders_dlq" \
  "$((rounds * 4)),$((rounds * 4)),$((rounds * 3))"
check "gold = aggregate of silver" \
  "SELECT count(*) FROM ((SELECT customer, orders, revenue FROM revenue_by_customer WHERE orders <> 0
      EXCEPT ALL SELECT customer, count(*), round(sum(amount), 2) FROM orders_silver GROUP BY customer)
    UNION ALL (SELECT customer, count(*), round(sum(amount), 2) FROM orders_silver GROUP BY customer
      EXCEPT ALL SELECT customer, orders, revenue FROM revenue_by_customer WHERE orders <> 0))" "0"
echo "${CPP_PIPELINE:+C++ pipeline: }rounds=${rounds} orders=$((rounds * ORDERS)) sigkills=${killed} PASS"
