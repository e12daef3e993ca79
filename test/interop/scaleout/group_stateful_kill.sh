#!/usr/bin/env bash
# A stateful query in group mode (docs/scale-out.md "Keyed state and partitioning", "The global
# watermark across tasks"): a windowed count per user over a topic keyed by the user, declared
# with partitionedBy => 'user_id'.
#   1. 3 processes of one group share the 6 partitions while records keep arriving;
#   2. one is killed with SIGKILL mid-run and restarted (the same command): its tasks go on from
#      their checkpoints, state included (tasks/<p>/state);
#   3. the table equals a one-process run of the same pipeline on the same input (every window
#      of every user once, the same counts), and every task published its watermark under
#      watermarks/<p>;
#   4. a record whose key is not its user_id fails its task with the partition, offset and both
#      values named.
#
# With SLUICE_KAFKA_BOOTSTRAP (test/interop/kafka/with_broker.sh) it runs on the real broker;
# without, on librdkafka's mock cluster (sluice_mock_kafka), which has a group coordinator.
# Usage: group_stateful_kill.sh <sluice> <sluice_mock_kafka>
set -uo pipefail
SLUICE="$(realpath "$1")"
MOCK="$(realpath "$2")"
HERE="$(cd "$(dirname "$0")" && pwd)"
fail() { echo "FAIL: $*"; exit 1; }
command -v kcat > /dev/null || fail "kcat is not installed (apt install kcat)"
WORK="$(mktemp -d)"
# shellcheck source=../../../scripts/mock-kafka.sh
source "${HERE}/../../../scripts/mock-kafka.sh"
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
USERS=12
TOTAL=1200
T0=1767225600  # 2026-01-01 00:00:00 UTC; record i has event time T0 + i s

# shellcheck source=group_test_lib.sh
source "${HERE}/group_test_lib.sh"
start_mock_kafka "${MOCK}" "clicks:${PARTITIONS}" "clicks2:2" || fail "could not create the topics"

# produce_clicks FIRST LAST: records i = FIRST..LAST, user u<i % USERS> as the key and in the
# value, in partition (i % USERS) % PARTITIONS: every record of a user in one partition.
produce_clicks() {
  local p i
  for ((p = 0; p < PARTITIONS; p++)); do
    for ((i = $1; i <= $2; i++)); do
      if (((i % USERS) % PARTITIONS == p)); then
        echo "u$((i % USERS))|{\"u\":\"u$((i % USERS))\",\"t\":$((T0 + i))}"
      fi
    done | kcat -P -b "${KAFKA_BOOTSTRAP}" -t clicks -p "${p}" -K '|' 2>> kcat.log ||
      { cat kcat.log; fail "kcat could not produce"; }
  done
}
# One record per partition two hours later: moves every partition's watermark past the data's
# windows (delay 30 minutes), so each of them is emitted; its own window stays in the state.
# Produced once the one-process run has read every other record: its watermark is the maximum
# over all partitions (Spark's, one source), so a record read after another partition's flush
# would be late there (and dropped), while the group's tasks read their partition in order.
produce_flush() {
  local p
  for ((p = 0; p < PARTITIONS; p++)); do
    echo "u${p}|{\"u\":\"u${p}\",\"t\":$((T0 + 7200))}" |
      kcat -P -b "${KAFKA_BOOTSTRAP}" -t clicks -p "${p}" -K '|' 2>> kcat.log ||
      { cat kcat.log; fail "kcat could not produce"; }
  done
}
pipeline() {  # pipeline TOPIC TABLE
  cat <<EOF
CREATE OR REFRESH STREAMING TABLE $2 AS
SELECT window.start AS ws, user_id, count(*) AS n
FROM (SELECT decode(value)::JSON->>'u' AS user_id, ts
      FROM STREAM read_kafka(bootstrapServers => '${KAFKA_BOOTSTRAP}', subscribe => '$1',
                             startingOffsets => 'earliest', maxOffsetsPerTrigger => 20,
                             partitionedBy => 'user_id')
        WITH ('kafka.session.timeout.ms' = '6000', 'kafka.heartbeat.interval.ms' = '1000')
        WATERMARK to_timestamp((decode(value)::JSON->>'t')::BIGINT) AS ts
        DELAY OF INTERVAL 30 MINUTES AS e) s
GROUP BY window(ts, '1 minute'), user_id;
EOF
}
pipeline clicks counts > pipeline.sql
rows() {  # rows WAREHOUSE: the table's rows as csv, sorted
  "${SLUICE}" sql --warehouse "$1" --format csv \
    "SELECT epoch(ws)::BIGINT || ',' || user_id || ',' || n FROM counts ORDER BY ws, user_id" \
    2> /dev/null | tail -n +2 | tr -d '\r"'
}
row_count() { rows "$1" | grep -c . ; }
has_rows() { [[ "$(row_count "$1")" -ge "$2" ]]; }
start() {  # start NAME: a process of the group, its log NAME.log (appended)
  "${SLUICE}" run pipeline.sql --warehouse wh --group clicks-group >> "$1.log" 2>&1 &
  PIDS+=($!)
  eval "PID_$1=$!"
}
all_owned_by() {
  local n seen="" o
  for n in "$@"; do
    o="$(owned "$n")"
    [[ -n "${o}" && "${o}" != none ]] && seen="${seen}${seen:+, }${o}"
  done
  [[ "$(echo "${seen}" | tr ',' '\n' | tr -d ' ' | sort -n | tr '\n' ' ')" == "0 1 2 3 4 5 " ]]
}

produce_clicks 0 399

# 1. Three processes share the six partitions; more records keep arriving. The one-process run
#    of the same pipeline reads the same topic into another warehouse.
"${SLUICE}" run pipeline.sql --warehouse one > one.log 2>&1 &
ONE=$!
PIDS+=("${ONE}")
start a
start b
start c
wait_for 90 "a, b and c do not own every partition once" all_owned_by a b c
echo "ok: 3 processes: a owns $(owned a), b $(owned b), c $(owned c)"
grep -q 'stateful, keyed by user_id' a.log || { dump_logs; fail "a does not say it is keyed"; }
(
  for ((k = 0; k < 8; k++)); do
    produce_clicks $((400 + k * 100)) $((499 + k * 100))
    sleep 1
  done
) &
PRODUCER=$!

# 2. b is killed once it has committed batches, then restarted.
wait_for 90 "b committed no batch" grep -q ' batch ' b.log
b_owned="$(owned b)"
kill -9 "${PID_b}"
wait "${PID_b}" 2> /dev/null
echo "ok: b (owning ${b_owned}) killed with SIGKILL after $(grep -c ' batch ' b.log) batches"
echo "---- restarted" >> b.log
start b
wait "${PRODUCER}" || fail "the producer failed"
PRODUCER=""
one_read() {  # the rows the one-process run has read
  "${SLUICE}" sql --warehouse one --format csv \
    "SELECT coalesce(sum(num_input_rows), 0) FROM streaming_progress('counts')" 2> /dev/null |
    tail -n 1 | tr -d '\r"'
}
one_read_all() { [[ "$(one_read)" == "${TOTAL}" ]]; }
wait_for 240 "the one-process run did not read the ${TOTAL} records" one_read_all
produce_flush
want=$((TOTAL / 60 * USERS))  # 20 one-minute windows of 12 users
wait_for 240 "the group's table does not have ${want} rows" has_rows wh "${want}"
grep -q 'restarted' b.log && sed -n '/---- restarted/,$p' b.log | grep -q 'started task' ||
  { dump_logs; fail "the restarted b started no task"; }
for ((p = 0; p < PARTITIONS; p++)); do
  [[ -d "wh/_checkpoints/counts/tasks/${p}/state/0" ]] ||
    { ls -R wh/_checkpoints/counts | head -50; fail "no state under tasks/${p}/state/0"; }
  [[ -s "wh/_checkpoints/counts/watermarks/${p}" ]] || fail "partition ${p} published no watermark"
done
[[ ! -e wh/_checkpoints/counts/state ]] || fail "the group's root has a state/ of its own"
echo "ok: state under tasks/<p>/state, watermarks: $(cat wh/_checkpoints/counts/watermarks/0)"
# The root's streaming_progress: the six tasks' batches merged.
tasks_seen="$("${SLUICE}" sql --warehouse wh --format csv \
  "SELECT count(DISTINCT progress->>'name') FROM streaming_progress('counts')" 2> /dev/null |
  tail -n 1 | tr -d '\r"')"
[[ "${tasks_seen}" == "${PARTITIONS}" ]] ||
  fail "streaming_progress('counts') shows the batches of ${tasks_seen} tasks, want ${PARTITIONS}"
echo "ok: streaming_progress('counts') shows the batches of the ${PARTITIONS} tasks"

# 3. The one-process run of the same pipeline on the same input (started beside the group).
wait_for 240 "the one-process table does not have ${want} rows" has_rows one "${want}"
for n in a b c; do kill -TERM "$(eval echo "\${PID_$n}")"; done
kill -TERM "${ONE}"
for n in a b c; do
  wait "$(eval echo "\${PID_$n}")"
  code=$?
  [[ ${code} -eq 0 ]] || { dump_logs; fail "process $n exited ${code} on SIGTERM"; }
done
wait "${ONE}" || { tail -n 20 one.log; fail "the one-process run exited $? on SIGTERM"; }
PIDS=()
rows wh > group.csv
rows one > one.csv
[[ "$(wc -l < one.csv)" -eq "${want}" ]] || fail "the one-process run has $(wc -l < one.csv) rows"
if ! diff one.csv group.csv > diff.txt; then
  head -n 20 diff.txt
  fail "the group's table differs from the one-process run's"
fi
[[ "$(cut -d, -f3 group.csv | sort -u)" == "5" ]] || fail "a count is not 5: $(head group.csv)"
echo "ok: the group's ${want} windows equal the one-process run's (each user 5 per minute)"

# 4. A record whose key is not its user_id fails the task, named.
echo "u1|{\"u\":\"u7\",\"t\":${T0}}" | kcat -P -b "${KAFKA_BOOTSTRAP}" -t clicks2 -p 1 -K '|' \
  2>> kcat.log || { cat kcat.log; fail "kcat could not produce to clicks2"; }
pipeline clicks2 counts2 > bad.sql
timeout 120 "${SLUICE}" run bad.sql --warehouse wh2 --group bad-group > bad.log 2>&1
code=$?
[[ ${code} -eq 1 ]] || { tail -n 30 bad.log; fail "the mis-keyed run exited ${code}, want 1"; }
grep -q "partition 1, offset 0 has the key 'u1' but its partitionedBy column user_id is 'u7'" \
  bad.log || { tail -n 30 bad.log; fail "the error does not name the record"; }
echo "ok: a mis-keyed record fails its task: $(grep -o 'the record of topic[^:]*' bad.log | head -1)"
echo "PASS"
