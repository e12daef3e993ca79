#!/usr/bin/env bash
# SIGINT and SIGTERM of `sluice run` while its Kafka source is stuck (issue 16 §4, issue 24 #8):
#   1. a topic with no new data (the source polls an idle topic): SIGINT, then SIGTERM of a
#      second run;
#   2. the broker stopped after the stream started (the source waits for it, up to
#      kafkaConsumer.pollTimeoutMs, 120 s by default): SIGINT, then SIGTERM of a second run.
# Each time `sluice run` must end within STOP_BOUND_S seconds (far below the 120 s the source
# would wait), exit 0 printing "stopped", and leave a consistent checkpoint: its latest
# commits/<N> is the latest offsets/<N>, or one behind (a planned batch that the next run
# re-runs with the same offsets). A restart then continues exactly: the table holds every
# record once (count, distinct ids, distinct Kafka coordinates).
#
# On the real broker (through with_broker.sh: SLUICE_KAFKA_BOOTSTRAP, SLUICE_KAFKA_DIR) the
# broker is stopped with `scripts/kafka.sh halt` and started again with `resume`. Without them it
# runs on librdkafka's mock cluster (sluice_mock_kafka, a process): the broker is stopped by
# killing that process, whose records go with it, so case 2 checks the stop and the checkpoint
# there, and the restart's exactness only on the real broker.
#
# Usage: signal_stuck_source.sh <sluice> <sluice_mock_kafka>
set -uo pipefail
SLUICE="$(realpath "$1")"
MOCK="$(realpath "$2")"
KAFKA="$(cd "$(dirname "$0")/../../.." && pwd)/scripts/kafka.sh"
STOP_BOUND_S=15
fail() { echo "FAIL: $*"; exit 1; }
command -v kcat > /dev/null || fail "kcat is not installed (apt install kcat)"
REAL=0
if [[ -n "${SLUICE_KAFKA_BOOTSTRAP:-}" ]]; then
  [[ -n "${SLUICE_KAFKA_DIR:-}" ]] || fail "SLUICE_KAFKA_DIR is not set: run me through with_broker.sh"
  REAL=1
fi
WORK="$(mktemp -d)"
# shellcheck source=../../../scripts/mock-kafka.sh
source "$(dirname "$0")/../../../scripts/mock-kafka.sh"
run_pid=""
cleanup() {
  [[ -n "${run_pid}" ]] && kill -9 "${run_pid}" 2> /dev/null
  stop_mock_kafka
  if [[ ${REAL} -eq 1 ]]; then
    "${KAFKA}" status "${SLUICE_KAFKA_DIR}" > /dev/null 2>&1 ||
      "${KAFKA}" resume "${SLUICE_KAFKA_DIR}" > /dev/null
  fi
  rm -rf "${WORK}"
}
trap cleanup EXIT
cd "${WORK}"
start_mock_kafka "${MOCK}" events:2 || fail "the cluster did not start"
BOOTSTRAP="${KAFKA_BOOTSTRAP}"
CK=wh/_checkpoints/events

records=0
produce() {  # produce N: N records with the next ids, over the 2 partitions
  local n="$1" p id
  for p in 0 1; do
    for ((id = records + p; id < records + n; id += 2)); do
      echo "{\"id\": ${id}}"
    done | kcat -P -b "${BOOTSTRAP}" -t events -p "${p}" 2>> kcat.log ||
      { cat kcat.log; fail "kcat could not produce"; }
  done
  records=$((records + n))
}
count() {
  "${SLUICE}" sql --warehouse wh --format csv "SELECT count(*) FROM events" 2> /dev/null |
    tail -n 1 | tr -d '\r"'
}
start_run() {
  "${SLUICE}" run pipeline.sql --warehouse wh > "run$1.log" 2>&1 &
  run_pid=$!
  RUN_LOG="run$1.log"
}
await_count() {  # await_count N: until the table holds N rows (up to 120 s)
  local i got=""
  for ((i = 0; i < 240; i++)); do
    got="$(count)"
    [[ "${got}" == "$1" ]] && return 0
    kill -0 "${run_pid}" 2> /dev/null || { cat "${RUN_LOG}"; fail "sluice run exited early"; }
    sleep 0.5
  done
  cat "${RUN_LOG}"
  fail "the table holds '${got}' rows after 120 s, want $1"
}
latest() {  # latest DIR: the highest batch id in DIR, -1 when none
  local n
  n=$(ls "$1" 2> /dev/null | grep -E '^[0-9]+$' | sort -n | tail -n 1)
  echo "${n:--1}"
}
# stop_with SIG WHAT: sends SIG to sluice run, waits for it (bounded), checks the exit and the
# checkpoint.
stop_with() {
  local sig="$1" what="$2" start end i code
  start=$(date +%s%N)
  kill "-${sig}" "${run_pid}"
  for ((i = 0; i < STOP_BOUND_S * 10; i++)); do
    kill -0 "${run_pid}" 2> /dev/null || break
    sleep 0.1
  done
  if kill -0 "${run_pid}" 2> /dev/null; then
    cat "${RUN_LOG}"
    fail "${what}: sluice run still runs ${STOP_BOUND_S} s after SIG${sig}"
  fi
  wait "${run_pid}"
  code=$?
  end=$(date +%s%N)
  run_pid=""
  [[ ${code} -eq 0 ]] || { cat "${RUN_LOG}"; fail "${what}: sluice run exited ${code} after SIG${sig}, want 0"; }
  grep -qx "stopped" "${RUN_LOG}" || { cat "${RUN_LOG}"; fail "${what}: no 'stopped' line after SIG${sig}"; }
  if grep -qE "query [^ ]+ failed|Error:" "${RUN_LOG}"; then
    cat "${RUN_LOG}"
    fail "${what}: a query failed"
  fi
  local offsets commits
  offsets=$(latest "${CK}/offsets")
  commits=$(latest "${CK}/commits")
  if [[ ${commits} -ne ${offsets} && ${commits} -ne $((offsets - 1)) ]]; then
    fail "${what}: checkpoint inconsistent after SIG${sig}: latest offsets ${offsets}, commits ${commits}"
  fi
  "${SLUICE}" checkpoint inspect "${CK}" > inspect.txt 2>&1 ||
    { cat inspect.txt; fail "${what}: checkpoint inspect failed"; }
  echo "ok: ${what}: SIG${sig} stopped sluice run in $(((end - start) / 1000000)) ms, exit 0," \
    "offsets ${offsets}, commits ${commits}"
}
broker_down() {
  if [[ ${REAL} -eq 1 ]]; then
    "${KAFKA}" halt "${SLUICE_KAFKA_DIR}" || fail "could not stop the broker"
  else
    kill -9 "${MOCK_KAFKA_PID}" && wait "${MOCK_KAFKA_PID}" 2> /dev/null
    MOCK_KAFKA_PID=""
  fi
}
broker_up() {
  "${KAFKA}" resume "${SLUICE_KAFKA_DIR}" > /dev/null || fail "the broker did not start again"
}
check_table() {  # every record once: count, distinct ids, min, max, distinct coordinates
  local got want
  got="$("${SLUICE}" sql --warehouse wh --format csv \
    "SELECT count(*) || ',' || count(DISTINCT id) || ',' || min(id::INT) || ',' || max(id::INT) || ',' ||
            count(DISTINCT (partition, offset)) AS r FROM events" | tail -n 1 | tr -d '\r"')"
  want="${records},${records},0,$((records - 1)),${records}"
  [[ "${got}" == "${want}" ]] ||
    fail "$1: table holds (count, distinct ids, min, max, distinct offsets) = ${got}, want ${want}"
  echo "ok: $1: ${records} records, each once"
}

cat > pipeline.sql << EOF
CREATE OR REFRESH STREAMING TABLE events AS
SELECT decode(value)::JSON->>'id' AS id, partition, offset
FROM STREAM read_kafka(bootstrapServers => '${BOOTSTRAP}', subscribe => 'events',
                       startingOffsets => 'earliest', maxOffsetsPerTrigger => 15);
EOF

# 1. No new data: the source polls an idle topic.
produce 40
start_run 1
await_count "${records}"
sleep 1
stop_with INT "idle topic"
produce 20  # while nothing runs
start_run 2
await_count "${records}"
check_table "restart after SIGINT"
sleep 1
stop_with TERM "idle topic"

# 2. The broker stopped after the stream started: the source waits for it.
produce 20
start_run 3
await_count "${records}"
broker_down
sleep 3  # the source is now waiting for the broker
kill -0 "${run_pid}" 2> /dev/null || { cat "${RUN_LOG}"; fail "sluice run exited while the broker was down"; }
stop_with INT "broker stopped"
if [[ ${REAL} -eq 0 ]]; then
  echo "records=${records} PASS (mock cluster: the broker's records went with it, no restart)"
  exit 0
fi
broker_up
produce 20
start_run 4
await_count "${records}"
check_table "restart after SIGINT with the broker down"
broker_down
sleep 3
stop_with TERM "broker stopped"
broker_up
produce 20
start_run 5
await_count "${records}"
check_table "restart after SIGTERM with the broker down"
stop_with TERM "final"
echo "records=${records} PASS"
