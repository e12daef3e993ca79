#!/usr/bin/env bash
# A zombie of a group (docs/scale-out.md "How a zombie is fenced"), on a real broker and moto's
# S3: the warehouse and checkpoints on s3://, two processes with a local cache each (two
# machines: no lock between them). b is stopped with SIGSTOP past session.timeout.ms while
# records keep arriving; a is given b's partitions and goes on from b's tasks' checkpoints on S3;
# b is resumed with SIGCONT: its tasks' next writes find what a wrote (a Conflict: fenced) or its
# membership reports the partitions lost, and it stops them; the table holds every record exactly
# once (count = distinct ids = records produced).
#
# Run by test/interop/kafka/with_broker.sh then test/interop/s3/with_moto.sh
# (SLUICE_KAFKA_BOOTSTRAP, AWS_ENDPOINT_URL_S3).
# Usage: group_zombie.sh <sluice> <sluice_mock_kafka>
set -uo pipefail
SLUICE="$(realpath "$1")"
MOCK="$(realpath "$2")"
fail() { echo "FAIL: $*"; exit 1; }
[[ -n "${SLUICE_KAFKA_BOOTSTRAP:-}" ]] || fail "run me through test/interop/kafka/with_broker.sh"
[[ -n "${AWS_ENDPOINT_URL_S3:-}" ]] || fail "run me through test/interop/s3/with_moto.sh"
command -v kcat > /dev/null || fail "kcat is not installed (apt install kcat)"
WORK="$(mktemp -d)"
# shellcheck source=../../../scripts/mock-kafka.sh
source "$(dirname "$0")/../../../scripts/mock-kafka.sh"
PIDS=()
PRODUCER=""
cleanup() {
  local pid
  for pid in "${PIDS[@]}" ${PRODUCER}; do
    kill -CONT "${pid}" 2> /dev/null
    kill -9 "${pid}" 2> /dev/null
    wait "${pid}" 2> /dev/null
  done
  stop_mock_kafka
  rm -rf "${WORK}"
}
trap cleanup EXIT
cd "${WORK}"
PARTITIONS=4
TOTAL=1200
WH="s3://zombie/wh"
curl -sf -X PUT "${AWS_ENDPOINT_URL_S3}/zombie" > /dev/null || fail "could not create the bucket"

# shellcheck source=group_test_lib.sh
source "$(dirname "$0")/group_test_lib.sh"
table() {
  SLUICE_LOCAL_CACHE_DIR="${WORK}/cache-sql" "${SLUICE}" sql --warehouse "${WH}" --format csv \
    "SELECT count(*) || ',' || count(DISTINCT id) || ',' || coalesce(min(id), -1) || ',' || coalesce(max(id), -1)
     FROM (SELECT id::INT AS id FROM copy)" 2> /dev/null | tail -n 1 | tr -d '\r"'
}
start() {  # start NAME: a process of the group with a local cache of its own (a machine)
  SLUICE_LOCAL_CACHE_DIR="${WORK}/cache-$1" \
    "${SLUICE}" run pipeline.sql --warehouse "${WH}" --group zombie-group > "$1.log" 2>&1 &
  PIDS+=($!)
  eval "PID_$1=$!"
}
owns_all() { [[ "$(owned "$1")" == "0, 1, 2, 3" ]]; }
batches_of() {  # batches_of NAME PARTITION...: batch lines NAME.log has for those tasks
  local n="$1" p c=0
  shift
  for p in "$@"; do c=$((c + $(grep -c "^copy\[${p}\] *batch" "${n}.log"))); done
  echo "${c}"
}

start_mock_kafka "${MOCK}" "events:${PARTITIONS}" || fail "could not create the topic"
cat > pipeline.sql <<EOF
CREATE OR REFRESH STREAMING TABLE copy AS
SELECT decode(value)::JSON->>'id' AS id, partition, offset
FROM STREAM read_kafka(bootstrapServers => '${KAFKA_BOOTSTRAP}', subscribe => 'events',
                       startingOffsets => 'earliest', maxOffsetsPerTrigger => 20)
  WITH ('kafka.session.timeout.ms' = '6000', 'kafka.heartbeat.interval.ms' = '1000');
EOF
produce 0 399
start a
wait_for 60 "a did not start" owns_some a
start b
wait_for 60 "b was given no partition" owns_some b
wait_for 60 "b committed no batch" grep -q ' batch ' b.log
b_owned="$(owned b)"
echo "ok: a owns $(owned a), b owns ${b_owned}"

(
  for ((k = 0; k < 8; k++)); do
    produce $((400 + k * 100)) $((499 + k * 100))
    sleep 1
  done
) &
PRODUCER=$!

# b pauses past the session timeout: a is given its partitions and runs their tasks on S3.
kill -STOP "${PID_b}"
echo "ok: b stopped with SIGSTOP"
wait_for 60 "a was not given b's partitions" owns_all a
read -r -a b_parts <<< "$(echo "${b_owned}" | tr -d ',')"
before="$(batches_of a "${b_parts[@]}")"
a_ran_them() { [[ "$(batches_of a "${b_parts[@]}")" -gt "${before}" ]]; }
wait_for 60 "a committed no batch of b's former tasks" a_ran_them
echo "ok: a owns $(owned a) and ran $(batches_of a "${b_parts[@]}") batches of b's former tasks (${before} before)"

# b resumes: a zombie whose tasks' next writes meet a's.
b_lines=$(wc -l < b.log)
kill -CONT "${PID_b}"
echo "ok: b resumed with SIGCONT"
fenced() { tail -n +$((b_lines + 1)) b.log | grep -E -q 'Conflict|lost events'; }
wait_for 60 "b was neither fenced nor told its partitions were lost" fenced
echo "ok: b after SIGCONT: $(tail -n +$((b_lines + 1)) b.log | grep -E -m 2 -o 'lost events[^(]*|Conflict: .{0,160}' | tr '\n' ' ')"

wait "${PRODUCER}" || fail "the producer failed"
PRODUCER=""
want="${TOTAL},${TOTAL},0,$((TOTAL - 1))"
wait_for 180 "the table is not ${want} (count,distinct,min,max): $(table)" table_is "${want}"
echo "ok: the table holds every record once: ${want}"
for n in a b; do kill -TERM "$(eval echo "\${PID_$n}")"; done
for n in a b; do
  wait "$(eval echo "\${PID_$n}")"
  code=$?
  [[ ${code} -eq 0 ]] || { dump_logs; fail "process $n exited ${code} on SIGTERM"; }
done
PIDS=()
table_is "${want}" || fail "after the stop the table is $(table), want ${want}"
[[ ! -e s3: && ! -e "${WORK}/s3:" ]] || fail "a local directory named s3: was made"
echo "ok: SIGTERM stopped a and b with exit code 0"
echo "PASS"
