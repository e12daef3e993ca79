#!/usr/bin/env bash
# Exactly-once into Kafka across crashes of `sluice run`, on a real broker: JSON records are
# produced into topic "in" round by round while `sluice run` of a pipeline file (Kafka "in" ->
# from_json -> a transactional Kafka sink writing "out": CREATE SINK ... USING kafka with
# kafka.transactional.id, CREATE FLOW ... INSERT INTO the sink, docs/streaming-sql.md "Sinks") is
# killed with SIGKILL at random moments KILLS times and started again. After a final clean run,
# two read_committed consumers of "out", kcat and Sluice's own Kafka source (a streaming table
# over read_kafka with kafka.isolation.level = read_committed, through `sluice sql`), must each
# see every record of "in" exactly once, in the same order per partition; the read_uncommitted
# count (which includes the aborted transactions of the killed runs) is shown.
#
# Run by with_broker.sh (SLUICE_KAFKA_BOOTSTRAP).
# Usage: transactional_sigkill.sh <sluice> <sluice_mock_kafka> [kills (default 10)] [seed]
set -uo pipefail
SLUICE="$(realpath "$1")"
MOCK="$(realpath "$2")"
KILLS="${3:-10}"
RANDOM="${4:-$$}"
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
start_mock_kafka "${MOCK}" in:3 out:3 markers:1 || fail "could not create the topics"
BOOTSTRAP="${KAFKA_BOOTSTRAP}"

# The pipeline: each batch (7 offsets of "in") is one Kafka transaction of "out".
cat > pipeline.sql << SQL
CREATE SINK eo_out USING kafka
OPTIONS ('kafka.bootstrap.servers' '${BOOTSTRAP}', 'topic' 'out',
         'kafka.transactional.id' 'interop-eo-sql-v1', 'transactionMarkerTopic' 'markers')
TRIGGER AVAILABLE NOW;

CREATE FLOW eo_copy AS INSERT INTO eo_out
SELECT key, CAST(r.id AS STRING) AS value
FROM (SELECT key, from_json(CAST(value AS STRING), 'id BIGINT') AS r
      FROM STREAM read_kafka(bootstrapServers => '${BOOTSTRAP}', subscribe => 'in',
                             startingOffsets => 'earliest', maxOffsetsPerTrigger => 7)) AS parsed
WHERE r.id IS NOT NULL;
SQL

records=0
produce_round() {  # 60 records k<id>|{"id":<id>} with unique ids over the 3 partitions
  local p id
  for p in 0 1 2; do
    for ((id = records + p; id < records + 60; id += 3)); do echo "k${id}|{\"id\":${id}}"; done |
      kcat -P -b "${BOOTSTRAP}" -t in -p "${p}" -K '|' 2>> kcat.log ||
      { cat kcat.log; fail "kcat could not produce"; }
  done
  records=$((records + 60))
}

killed=0
for ((round = 0; killed < KILLS && round < 4 * KILLS; round++)); do
  produce_round
  "${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1 &
  pid=$!
  ms=$((RANDOM % 2500))
  sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
  if kill -9 "${pid}" 2> /dev/null; then killed=$((killed + 1)); fi
  wait "${pid}" 2> /dev/null
  code=$?
  if [[ ${code} -ne 0 && ${code} -ne 137 ]]; then
    cat run.log
    fail "round ${round}: sluice run exited ${code} (not a kill)"
  fi
done
((killed >= KILLS)) || fail "only ${killed} of ${KILLS} runs were killed"
produce_round
"${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1 || { cat run.log; fail "the final run failed"; }

consume() {  # consume ISOLATION: "key value" of "out", one per line, in partition and offset order
  local p
  for p in 0 1 2; do
    kcat -C -b "${BOOTSTRAP}" -t out -p "${p}" -o beginning -e -q -X "isolation.level=$1" \
      -f '%k %s\n' 2>> kcat.log || { cat kcat.log; fail "kcat could not consume"; }
  done
}
consume read_committed > committed.txt
consume read_uncommitted > uncommitted.txt
"${SLUICE}" sql --warehouse dump --format csv \
  "CREATE STREAMING TABLE out_copy AS
   SELECT decode(key) || ' ' || decode(value) AS line, partition, offset
   FROM STREAM read_kafka(bootstrapServers => '${BOOTSTRAP}', subscribe => 'out',
                          startingOffsets => 'earliest')
   WITH ('kafka.isolation.level' = 'read_committed');
   REFRESH STREAMING TABLE out_copy;
   SELECT line FROM out_copy ORDER BY partition, offset" > dump.csv 2> dump.log ||
  { cat dump.log; fail "Sluice's read_committed read of out failed"; }
tail -n +2 dump.csv | tr -d '\r' > sluice_committed.txt  # without the CSV header and CRLFs
cmp -s committed.txt sluice_committed.txt ||
  fail "Sluice's read_committed read of out ($(wc -l < sluice_committed.txt) records) differs from kcat's ($(wc -l < committed.txt)): $(diff committed.txt sluice_committed.txt | head -5)"
total=$(wc -l < committed.txt)
distinct=$(cut -d' ' -f2 committed.txt | sort -u | wc -l)
bad_keys=$(awk '$1 != "k" $2' committed.txt | wc -l)
in_range=$(awk -v n="${records}" '$2 >= 0 && $2 < n' committed.txt | cut -d' ' -f2 | sort -u | wc -l)
echo "records=${records} sigkills=${killed} read_committed=${total} distinct=${distinct}" \
  "read_uncommitted=$(wc -l < uncommitted.txt) sluice_read_committed=$(wc -l < sluice_committed.txt) (same records, same order)"
[[ ${total} -eq ${records} && ${distinct} -eq ${records} && ${in_range} -eq ${records} ]] ||
  fail "a read_committed consumer saw ${total} records (${distinct} distinct, ${in_range} of the ids), want each of ${records} once"
[[ ${bad_keys} -eq 0 ]] || fail "${bad_keys} records lost their key"
echo "PASS"
