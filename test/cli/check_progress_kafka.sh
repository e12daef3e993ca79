#!/usr/bin/env bash
# `sluice run --progress-kafka SERVERS/TOPIC`: every batch's progress JSON as a Kafka record
# (key: the query id), the same objects as --progress-log writes; a bad spec is an error; an
# unreachable broker only warns (monitoring never fails the run).
#
# Usage: check_progress_kafka.sh <sluice> <sluice_mock_kafka>
set -uo pipefail
SLUICE="$(realpath "$1")"
MOCK="$(realpath "$2")"
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
fail() { echo "FAIL: $*"; exit 1; }
start_mock_kafka "${MOCK}" progress:1 || fail "the mock cluster did not start"
"${SLUICE}" sql --warehouse wh "CREATE TABLE src (id BIGINT); INSERT INTO src VALUES (1), (2); INSERT INTO src VALUES (3)" > /dev/null ||
  fail "setup"
cat > pipeline.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE copy TRIGGER AVAILABLE NOW AS
SELECT id FROM STREAM src WITH (maxFilesPerTrigger = 1);
SQL
"${SLUICE}" run pipeline.sql --warehouse wh --progress-log progress.jsonl \
  --progress-kafka "${KAFKA_BOOTSTRAP}/progress" > run.log 2>&1 || { cat run.log; fail "sluice run failed"; }
grep -q "Warning" run.log && { cat run.log; fail "unexpected warning"; }
kcat -C -b "${KAFKA_BOOTSTRAP}" -t progress -o beginning -e -q -f '%k\t%s\n' > records.tsv 2> kcat.log ||
  { cat kcat.log; fail "kcat could not consume"; }
lines=$(wc -l < progress.jsonl)
[[ ${lines} -ge 2 ]] || fail "expected a progress line per batch, got ${lines}"
[[ $(wc -l < records.tsv) -eq ${lines} ]] || fail "records $(wc -l < records.tsv) != progress lines ${lines}"
cut -f2 records.tsv > records.jsonl
cmp -s records.jsonl progress.jsonl || fail "the records differ from the progress log"
# The key of every record is the query id of its progress.
bad_keys=$(awk -F'\t' '{ if (index($2, "\"id\":\"" $1 "\"") == 0) print }' records.tsv | wc -l)
[[ ${bad_keys} -eq 0 ]] || fail "${bad_keys} records are not keyed by their query id"
# A malformed spec is an error that says what is expected.
if "${SLUICE}" run pipeline.sql --warehouse wh --progress-kafka "no-topic" > out.log 2>&1; then
  fail "a spec without a topic was accepted"
fi
grep -q "must be BOOTSTRAP_SERVERS/TOPIC" out.log || fail "error: $(cat out.log)"
# An unreachable broker: the run succeeds and warns about the undelivered records.
"${SLUICE}" sql --warehouse wh "INSERT INTO src VALUES (4)" > /dev/null
"${SLUICE}" run pipeline.sql --warehouse wh --progress-kafka "127.0.0.1:1/progress" > down.log 2>&1 ||
  { cat down.log; fail "an unreachable progress broker failed the run"; }
grep -q "Warning: --progress-kafka" down.log || fail "no warning for undelivered records: $(cat down.log)"
echo "PASS (${lines} progress records)"
