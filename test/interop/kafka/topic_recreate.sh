#!/usr/bin/env bash
# A fault a mock cluster cannot show: the topic a streaming table reads is deleted and created
# again (with fewer records than the stream had read) between two `sluice run`s.
#   - failOnDataLoss true (the default): the run fails with an error naming the topic-partition
#     and failOnDataLoss, and the table keeps what it had;
#   - the same pipeline with failOnDataLoss => false: a warning, and every record of the new
#     topic lands in the table, once (and a later record once more as the stream goes on).
#
# Run by with_broker.sh (SLUICE_KAFKA_BOOTSTRAP).
# Usage: topic_recreate.sh <sluice> <sluice_mock_kafka>
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
cleanup() {
  stop_mock_kafka
  rm -rf "${WORK}"
}
trap cleanup EXIT
cd "${WORK}"

# sluice_mock_kafka on a real broker deletes every topic and creates the named ones: started
# again, it is "delete the topic and create it again".
recreate_topic() {
  stop_mock_kafka
  rm -f mock-kafka-bootstrap.txt
  start_mock_kafka "${MOCK}" events:2 || fail "could not (re)create the topic"
}
produce() {  # produce FIRST LAST: ids FIRST..LAST, id % 2 is the partition
  local p id
  for p in 0 1; do
    for ((id = $1; id <= $2; id++)); do
      if ((id % 2 == p)); then echo "{\"id\": ${id}}"; fi
    done | kcat -P -b "${KAFKA_BOOTSTRAP}" -t events -p "${p}" 2>> kcat.log ||
      { cat kcat.log; fail "kcat could not produce"; }
  done
}
table() {
  "${SLUICE}" sql --warehouse wh --format csv \
    "SELECT count(*) || ',' || count(DISTINCT id) || ',' || coalesce(min(id), -1) || ',' || coalesce(max(id), -1)
     FROM (SELECT id::INT AS id FROM copy)" | tail -n 1 | tr -d '\r"'
}
pipeline() {  # pipeline FILE [extra read_kafka arguments]
  cat > "$1" <<EOF
CREATE OR REFRESH STREAMING TABLE copy TRIGGER AVAILABLE NOW AS
SELECT decode(value)::JSON->>'id' AS id, partition, offset
FROM STREAM read_kafka(bootstrapServers => '${KAFKA_BOOTSTRAP}', subscribe => 'events',
                       startingOffsets => 'earliest'${2:+, $2});
EOF
}

recreate_topic
produce 0 29
pipeline strict.sql
"${SLUICE}" run strict.sql --warehouse wh > run1.log 2>&1 || { cat run1.log; fail "the first run failed"; }
[[ "$(table)" == "30,30,0,29" ]] || fail "after the first run the table is $(table), want 30,30,0,29"
echo "ok: 30 records read from the first topic"

recreate_topic
produce 100 109  # 5 records per partition: below the 15 per partition the stream had read
"${SLUICE}" run strict.sql --warehouse wh --max-restarts 0 > run2.log 2>&1
code=$?
[[ ${code} -ne 0 ]] || { cat run2.log; fail "failOnDataLoss=true: the run succeeded after the topic was re-created"; }
grep -q "events-[01]" run2.log || { cat run2.log; fail "the error does not name the topic-partition"; }
grep -q "failOnDataLoss" run2.log || { cat run2.log; fail "the error does not name failOnDataLoss"; }
echo "ok: failOnDataLoss=true fails: $(grep -m1 -o 'Error: .*' run2.log | cut -c1-300)"
[[ "$(table)" == "30,30,0,29" ]] || fail "the failed run changed the table: $(table)"

pipeline lenient.sql "failOnDataLoss => false"
"${SLUICE}" run lenient.sql --warehouse wh > run3.log 2>&1 || { cat run3.log; fail "failOnDataLoss=false: the run failed"; }
grep -q "WARN.*events-0.s offset was changed from 15 to 5" run3.log || { cat run3.log; fail "failOnDataLoss=false: no warning naming the partition"; }
echo "ok: failOnDataLoss=false warns: $(grep -m1 "WARN" run3.log | cut -c1-300)"
got="$(table)"
[[ "${got}" == "40,40,0,109" ]] || { cat run3.log; fail "failOnDataLoss=false: the table is ${got}, want 40,40,0,109 (the 10 new records once)"; }
new="$("${SLUICE}" sql --warehouse wh --format csv "SELECT string_agg(id, ' ' ORDER BY id::INT) FROM copy WHERE id::INT >= 100" | tail -n 1 | tr -d '\r"')"
[[ "${new}" == "100 101 102 103 104 105 106 107 108 109" ]] || fail "the new records are '${new}'"
echo "ok: the 10 records of the new topic are in the table once"

produce 110 113
"${SLUICE}" run lenient.sql --warehouse wh > run4.log 2>&1 || { cat run4.log; fail "the run after that failed"; }
got="$(table)"
[[ "${got}" == "44,44,0,113" ]] || fail "after 4 more records the table is ${got}, want 44,44,0,113"
echo "table=${got} PASS"
