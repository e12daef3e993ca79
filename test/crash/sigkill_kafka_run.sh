#!/usr/bin/env bash
# Crash test of a real `sluice run` reading Kafka (issue 6): a mock Kafka cluster runs in its own
# process (sluice_mock_kafka); kcat produces JSON records into a 3-partition topic while a
# pipeline streams them into a Delta streaming table; `sluice run` is killed with SIGKILL at
# random moments KILLS times (and every tenth round at a named crash point) and restarted. At
# the end one run finishes cleanly and the table must hold every record exactly once, with the
# Kafka coordinates of each.
#
# Usage: sigkill_kafka_run.sh <sluice binary> <sluice_mock_kafka binary> [kills (default 20)] [seed]
set -uo pipefail
SLUICE="$(realpath "$1")"
MOCK="$(realpath "$2")"
KILLS="${3:-20}"
RANDOM="${4:-$$}"
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

RECORDS_PER_ROUND=30
records=0
produce_round() {  # RECORDS_PER_ROUND records with unique ids, spread over the partitions
  local p r id n=$((RECORDS_PER_ROUND / 3))
  for p in 0 1 2; do
    # (The loop runs in a subshell of the pipe: the counter moves after it.)
    for ((r = 0; r < n; r++)); do
      id=$((records + r))
      echo "k${id}:{\"id\": ${id}, \"payload\": \"record ${id}\"}"
    done | kcat -P -b "${BOOTSTRAP}" -t orders -p "${p}" -K: 2>> kcat.log ||
      { echo "FAIL: kcat could not produce:"; cat kcat.log; exit 1; }
    records=$((records + n))
  done
}

cat > pipeline.sql <<EOF
CREATE OR REFRESH STREAMING TABLE events TRIGGER AVAILABLE NOW AS
SELECT decode(value)::JSON->>'id' AS id, decode(key) AS k, partition, offset
FROM STREAM read_kafka(bootstrapServers => '${BOOTSTRAP}', subscribe => 'orders',
                       startingOffsets => 'earliest', maxOffsetsPerTrigger => 12);
EOF

POINTS=(after_offsets_write after_state_commit after_sink_write after_commit_write)
killed=0
crashed_at_points=0
for ((round = 0; killed + crashed_at_points < KILLS && round < 4 * KILLS; round++)); do
  produce_round
  if ((round % 10 == 9)); then
    point="${POINTS[$(((round / 10) % 4))]}"
    SLUICE_CRASH_AT="${point}" "${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1
    code=$?
    if [[ ${code} -ne 137 ]] && ! grep -q "crash point" run.log; then
      if [[ ${code} -ne 0 ]]; then
        echo "FAIL: run with SLUICE_CRASH_AT=${point} exited ${code}:"; cat run.log; exit 1
      fi
    else
      crashed_at_points=$((crashed_at_points + 1))
    fi
    continue
  fi
  "${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1 &
  pid=$!
  sleep "0.$(printf '%03d' $((RANDOM % 400)))"
  if kill -9 "${pid}" 2> /dev/null; then killed=$((killed + 1)); fi
  wait "${pid}" 2> /dev/null
  code=$?
  if [[ ${code} -ne 0 && ${code} -ne 137 ]]; then
    echo "FAIL: round ${round}: sluice run exited ${code} (not a kill):"; cat run.log; exit 1
  fi
done

if ! "${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1; then
  echo "FAIL: the final run failed:"; cat run.log; exit 1
fi
got="$("${SLUICE}" sql --warehouse wh --format csv \
  "SELECT count(*) || ',' || count(DISTINCT id) || ',' || min(id::INT) || ',' || max(id::INT) || ',' ||
          count(DISTINCT (partition, offset)) || ',' || count(*) FILTER (WHERE k <> 'k' || id) AS r
   FROM events" | tail -n 1 | tr -d '\r"')"
want="${records},${records},0,$((records - 1)),${records},0"
echo "records=${records} sigkills=${killed} crash_points=${crashed_at_points} table=${got}"
if ((killed + crashed_at_points < KILLS)); then
  echo "FAIL: only $((killed + crashed_at_points)) of ${KILLS} runs were killed"; exit 1
fi
if [[ "${got}" != "${want}" ]]; then
  echo "FAIL: table holds (count, distinct ids, min, max, distinct offsets, wrong keys) = ${got}, want ${want}"
  exit 1
fi
echo "PASS"
