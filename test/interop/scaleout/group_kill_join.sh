#!/usr/bin/env bash
# One query over several processes by Kafka's consumer group (docs/scale-out.md), on a real
# broker: `sluice run --group` of a stateless Kafka -> Delta streaming table.
#   1. 3 processes of one group on a 6-partition topic share its partitions (each owns some, the
#      6 tasks' checkpoints are under <checkpoint>/tasks/0..5);
#   2. one is killed with SIGKILL while records keep arriving: the other two are given its
#      partitions (after session.timeout.ms) and go on from its tasks' last commits;
#   3. a fourth joins and is given partitions (cooperative-sticky: the owners stop those tasks at
#      a batch boundary first);
#   4. the table holds every record exactly once: count = distinct ids = records produced;
#   5. SIGTERM stops every process with exit code 0.
#
# Run by test/interop/kafka/with_broker.sh (SLUICE_KAFKA_BOOTSTRAP).
# Usage: group_kill_join.sh <sluice> <sluice_mock_kafka>
set -uo pipefail
SLUICE="$(realpath "$1")"
MOCK="$(realpath "$2")"
fail() { echo "FAIL: $*"; exit 1; }
[[ -n "${SLUICE_KAFKA_BOOTSTRAP:-}" ]] ||
  fail "run me through test/interop/kafka/with_broker.sh (a real broker is needed)"
command -v kcat > /dev/null || fail "kcat is not installed (apt install kcat)"
WORK="$(mktemp -d)"
# shellcheck source=../../../scripts/mock-kafka.sh
source "$(dirname "$0")/../../../scripts/mock-kafka.sh"
PIDS=()
PRODUCER=""
cleanup() {
  local pid
  for pid in "${PIDS[@]}" ${PRODUCER}; do
    kill -9 "${pid}" 2> /dev/null
    wait "${pid}" 2> /dev/null
  done
  stop_mock_kafka
  rm -rf "${WORK}"
}
trap cleanup EXIT
cd "${WORK}"
PARTITIONS=6
TOTAL=1800

# shellcheck source=group_test_lib.sh
source "$(dirname "$0")/group_test_lib.sh"
table() {  # count,distinct,min,max of the table's ids
  "${SLUICE}" sql --warehouse wh --format csv \
    "SELECT count(*) || ',' || count(DISTINCT id) || ',' || coalesce(min(id), -1) || ',' || coalesce(max(id), -1)
     FROM (SELECT id::INT AS id FROM copy)" 2> /dev/null | tail -n 1 | tr -d '\r"'
}
start() {  # start NAME: a process of the group, its log NAME.log
  "${SLUICE}" run pipeline.sql --warehouse wh --group copy-group > "$1.log" 2>&1 &
  PIDS+=($!)
  eval "PID_$1=$!"
}
all_owned_by() {  # all_owned_by NAME...: every partition owned by one of them, none twice
  local n seen="" o
  for n in "$@"; do
    o="$(owned "$n")"
    [[ -n "${o}" && "${o}" != none ]] && seen="${seen}${seen:+, }${o}"
  done
  [[ "$(echo "${seen}" | tr ',' '\n' | tr -d ' ' | sort -n | tr '\n' ' ')" == "0 1 2 3 4 5 " ]]
}

start_mock_kafka "${MOCK}" "events:${PARTITIONS}" || fail "could not create the topic"
cat > pipeline.sql <<EOF
CREATE OR REFRESH STREAMING TABLE copy AS
SELECT decode(value)::JSON->>'id' AS id, partition, offset
FROM STREAM read_kafka(bootstrapServers => '${KAFKA_BOOTSTRAP}', subscribe => 'events',
                       startingOffsets => 'earliest', maxOffsetsPerTrigger => 30)
  WITH ('kafka.session.timeout.ms' = '6000', 'kafka.heartbeat.interval.ms' = '1000');
EOF
produce 0 599

# 1. Three processes share the six partitions.
start a
start b
start c
each_owns_some() { local n; for n in "$@"; do owns_some "$n" || return 1; done; }
wait_for 60 "the three processes did not share the 6 partitions" \
  each_owns_some a b c
wait_for 60 "a, b and c do not own every partition once" all_owned_by a b c
echo "ok: 3 processes share the partitions: a owns $(owned a), b $(owned b), c $(owned c)"

# Records keep arriving while the processes run: 1200 more, in 12 steps.
(
  for ((k = 0; k < 12; k++)); do
    produce $((600 + k * 100)) $((699 + k * 100))
    sleep 1
  done
) &
PRODUCER=$!

# 2. b is killed mid-run, once it has committed batches of its tasks.
wait_for 60 "b committed no batch" grep -q ' batch ' b.log
b_owned="$(owned b)"
kill -9 "${PID_b}"
wait "${PID_b}" 2> /dev/null
echo "ok: b (owning ${b_owned}) killed with SIGKILL after $(grep -c ' batch ' b.log) batches"
wait_for 60 "a and c were not given b's partitions" all_owned_by a c
echo "ok: a owns $(owned a), c owns $(owned c) after b's death"

# 3. d joins and is given partitions.
start d
wait_for 60 "d was given no partition" owns_some d
wait_for 60 "a, c and d do not own every partition once" all_owned_by a c d
echo "ok: d joined: a owns $(owned a), c $(owned c), d $(owned d)"
grep -q 'revoking' a.log c.log || { dump_logs; fail "no partition was revoked for d"; }

# 4. Every record exactly once.
wait "${PRODUCER}" || fail "the producer failed"
PRODUCER=""
want="${TOTAL},${TOTAL},0,$((TOTAL - 1))"
wait_for 120 "the table is not ${want} (count,distinct,min,max)" table_is "${want}"
echo "ok: the table holds every record once: ${want}"
for ((p = 0; p < PARTITIONS; p++)); do
  [[ -d "wh/_checkpoints/copy/tasks/${p}/commits" ]] ||
    fail "no task checkpoint wh/_checkpoints/copy/tasks/${p}"
done
[[ -f wh/_checkpoints/copy/group ]] || fail "no group record"
echo "ok: the tasks' checkpoints are under tasks/0..5; group record $(cat wh/_checkpoints/copy/group)"

# 5. SIGTERM: every process stops at a batch boundary, exit code 0; the table is unchanged.
for n in a c d; do kill -TERM "$(eval echo "\${PID_$n}")"; done
for n in a c d; do
  wait "$(eval echo "\${PID_$n}")"
  code=$?
  [[ ${code} -eq 0 ]] || { dump_logs; fail "process $n exited ${code} on SIGTERM"; }
done
PIDS=()
table_is "${want}" || fail "after the stop the table is $(table), want ${want}"
echo "ok: SIGTERM stopped a, c and d with exit code 0"
echo "PASS"
