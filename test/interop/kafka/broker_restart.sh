#!/usr/bin/env bash
# A fault a mock cluster cannot show: the real broker stops and starts again while `sluice run`
# streams a 3-partition topic into a Delta streaming table (the default trigger: a batch as soon
# as data arrives). Twice: once stopped cleanly (SIGTERM), once killed (SIGKILL), each time down
# for a few seconds with the stream running. The stream must wait and continue by itself (no
# query failure, no restart), and the table must hold every record exactly once with its Kafka
# coordinates.
#
# Run by with_broker.sh (SLUICE_KAFKA_BOOTSTRAP, SLUICE_KAFKA_DIR).
# Usage: broker_restart.sh <sluice> <sluice_mock_kafka>
set -uo pipefail
SLUICE="$(realpath "$1")"
MOCK="$(realpath "$2")"
KAFKA="$(cd "$(dirname "$0")/../../.." && pwd)/scripts/kafka.sh"
fail() { echo "FAIL: $*"; exit 1; }
[[ -n "${SLUICE_KAFKA_BOOTSTRAP:-}" && -n "${SLUICE_KAFKA_DIR:-}" ]] ||
  fail "run me through test/interop/kafka/with_broker.sh (a real broker is needed)"
command -v kcat > /dev/null || fail "kcat is not installed (apt install kcat)"
WORK="$(mktemp -d)"
# shellcheck source=../../../scripts/mock-kafka.sh
source "$(dirname "$0")/../../../scripts/mock-kafka.sh"
run_pid=""
cleanup() {
  [[ -n "${run_pid}" ]] && kill -9 "${run_pid}" 2> /dev/null
  stop_mock_kafka
  "${KAFKA}" status "${SLUICE_KAFKA_DIR}" || "${KAFKA}" resume "${SLUICE_KAFKA_DIR}" > /dev/null
  rm -rf "${WORK}"
}
trap cleanup EXIT
cd "${WORK}"
# sluice_mock_kafka on a real broker: empties it and creates the topic.
start_mock_kafka "${MOCK}" orders:3 || fail "could not create the topic"
BOOTSTRAP="${KAFKA_BOOTSTRAP}"

records=0
produce() {  # produce N: N records with the next ids, over the 3 partitions
  local n="$1" p id
  for p in 0 1 2; do
    for ((id = records + p; id < records + n; id += 3)); do
      echo "k${id}:{\"id\": ${id}}"
    done | kcat -P -b "${BOOTSTRAP}" -t orders -p "${p}" -K: 2>> kcat.log ||
      { cat kcat.log; fail "kcat could not produce"; }
  done
  records=$((records + n))
}
count() {
  "${SLUICE}" sql --warehouse wh --format csv "SELECT count(*) FROM events" 2> /dev/null |
    tail -n 1 | tr -d '\r"'
}
await_count() {  # await_count N: until the table holds N rows (up to 120 s)
  local i got=""
  for ((i = 0; i < 240; i++)); do
    got="$(count)"
    [[ "${got}" == "$1" ]] && return 0
    kill -0 "${run_pid}" 2> /dev/null || { cat run.log; fail "sluice run exited early"; }
    sleep 0.5
  done
  cat run.log
  fail "the table holds '${got}' rows after 120 s, want $1"
}

cat > pipeline.sql <<EOF
CREATE OR REFRESH STREAMING TABLE events AS
SELECT decode(value)::JSON->>'id' AS id, decode(key) AS k, partition, offset
FROM STREAM read_kafka(bootstrapServers => '${BOOTSTRAP}', subscribe => 'orders',
                       startingOffsets => 'earliest', maxOffsetsPerTrigger => 50);
EOF
produce 300
"${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1 &
run_pid=$!
await_count 300
echo "ok: 300 records streamed before the first stop"

down_and_up() {  # down_and_up --kill|--term: stops the broker for 5 s while the stream runs
  local how="$1"
  produce 90  # in flight when the broker goes
  if [[ "${how}" == "--kill" ]]; then
    "${KAFKA}" halt "${SLUICE_KAFKA_DIR}" --kill || fail "could not kill the broker"
  else
    "${KAFKA}" halt "${SLUICE_KAFKA_DIR}" || fail "could not stop the broker"
  fi
  local stopped
  stopped=$(date +%s)
  sleep 5
  kill -0 "${run_pid}" 2> /dev/null || { cat run.log; fail "sluice run exited while the broker was down"; }
  "${KAFKA}" resume "${SLUICE_KAFKA_DIR}" > /dev/null || fail "the broker did not start again"
  echo "ok: broker down ${how#--} for $(($(date +%s) - stopped)) s with the stream running"
  produce 120
  await_count "${records}"
  echo "ok: the stream went on after the broker came back (${records} records)"
}
down_and_up --term
down_and_up --kill

kill -TERM "${run_pid}"
wait "${run_pid}"
code=$?
run_pid=""
[[ ${code} -eq 0 ]] || { cat run.log; fail "sluice run exited ${code} after SIGTERM"; }
if grep -qE "query [^ ]+ failed|Error:" run.log; then
  cat run.log
  fail "a query failed (it should have waited for the broker)"
fi
got="$("${SLUICE}" sql --warehouse wh --format csv \
  "SELECT count(*) || ',' || count(DISTINCT id) || ',' || min(id::INT) || ',' || max(id::INT) || ',' ||
          count(DISTINCT (partition, offset)) || ',' || count(*) FILTER (WHERE k <> 'k' || id) AS r
   FROM events" | tail -n 1 | tr -d '\r"')"
want="${records},${records},0,$((records - 1)),${records},0"
[[ "${got}" == "${want}" ]] ||
  fail "table holds (count, distinct ids, min, max, distinct offsets, wrong keys) = ${got}, want ${want}"
echo "records=${records} table=${got} PASS"
