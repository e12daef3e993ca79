#!/usr/bin/env bash
# Secrets never leak (issue 24 #1). A Kafka pipeline is given four secrets: a JAAS password
# written literally in the pipeline file, an SSL key password through Databricks'
# secret('kafka', 'key-password'), resolved from SLUICE_SECRET_KAFKA_KEY_PASSWORD, a Kafka sink's
# JAAS string through secret('kafka', 'sink-jaas') in CREATE SINK ... OPTIONS, and a batch
# read_kafka(...)'s `kafka.sasl.password` => secret('kafka', 'batch-pw'). It runs with the
# monitoring server and a progress log; then SHOW STREAMING TABLES, SHOW SINKS, DESCRIBE, the
# batch read, the table and checkpoint commands, and a run and a batch read whose secret()
# reference resolves to nothing. Afterwards every output and every file under the work directory
# (warehouse, checkpoints, logs) is searched:
#   - the secret() values appear nowhere;
#   - the literal appears only in the pipeline file and once in the streaming table's
#     definition (<warehouse>/_sluice/streaming_tables/bronze.json), which is mode 0600.
#
# Usage: check_secrets.sh <sluice> <sluice_mock_kafka>
set -uo pipefail
SLUICE="$(realpath "$1")"
MOCK="$(realpath "$2")"
command -v kcat > /dev/null || { echo "FAIL: kcat is not installed (apt install kcat)"; exit 1; }
command -v curl > /dev/null || { echo "FAIL: curl is not installed"; exit 1; }
WORK="$(mktemp -d)"
# shellcheck source=../../scripts/mock-kafka.sh
source "$(dirname "$0")/../../scripts/mock-kafka.sh"
RUN_PID=""
cleanup() {
  [[ -n "${RUN_PID}" ]] && kill "${RUN_PID}" 2> /dev/null && wait "${RUN_PID}" 2> /dev/null
  stop_mock_kafka
  rm -rf "${WORK}"
}
trap cleanup EXIT
cd "${WORK}"
fail() { echo "FAIL: $*"; exit 1; }

LITERAL="Hunter2LiteralJaasPw"
FROM_ENV="Hunter2FromEnvKeyPw"
SINK_SECRET="Hunter2SinkJaasPw"
BATCH_SECRET="Hunter2BatchReadPw"
export SLUICE_SECRET_KAFKA_KEY_PASSWORD="${FROM_ENV}"
export SLUICE_SECRET_KAFKA_SINK_JAAS="org.apache.kafka.common.security.plain.PlainLoginModule required username=\"app\" password=\"${SINK_SECRET}\";"
export SLUICE_SECRET_KAFKA_BATCH_PW="${BATCH_SECRET}"

start_mock_kafka "${MOCK}" orders:1 out:1 || fail "the mock cluster did not start"
printf '{"id":1}\n{"id":2}\n{"id":3}\n' | kcat -P -b "${KAFKA_BOOTSTRAP}" -t orders ||
  fail "kcat could not produce"

cat > pipeline.sql <<SQL
CREATE OR REFRESH STREAMING TABLE bronze TRIGGER PROCESSING TIME '200 milliseconds' AS
SELECT CAST(value AS VARCHAR) AS v
FROM STREAM read_kafka(bootstrapServers => '${KAFKA_BOOTSTRAP}', subscribe => 'orders',
                       startingOffsets => 'earliest')
WITH ('kafka.sasl.mechanism' = 'PLAIN',
      'kafka.sasl.jaas.config' = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="app" password="${LITERAL}";',
      'kafka.ssl.key.password' = secret('kafka', 'key-password'));
CREATE SINK out_sink USING kafka
OPTIONS ('kafka.bootstrap.servers' '${KAFKA_BOOTSTRAP}', 'topic' 'out', 'kafka.sasl.mechanism' 'PLAIN',
         'kafka.sasl.jaas.config' secret('kafka', 'sink-jaas'))
TRIGGER PROCESSING TIME '200 milliseconds';
CREATE FLOW to_out AS INSERT INTO out_sink
SELECT value FROM STREAM read_kafka(bootstrapServers => '${KAFKA_BOOTSTRAP}', subscribe => 'orders',
                                    startingOffsets => 'earliest');
SQL

"${SLUICE}" run pipeline.sql --warehouse wh --progress-log progress.jsonl --ui 127.0.0.1:0 \
  > run.log 2>&1 &
RUN_PID=$!
url=""
for ((i = 0; i < 300; i++)); do
  url=$(sed -n 's/^monitoring UI at \(http[^ ]*\).*/\1/p' run.log | head -1)
  [[ -n "${url}" && -s progress.jsonl ]] && grep '"name":"bronze"' progress.jsonl |
    grep -q '"numInputRows":3' && grep '"name":"to_out"' progress.jsonl |
    grep -q '"numInputRows":3' && break
  kill -0 "${RUN_PID}" 2> /dev/null || { cat run.log; fail "sluice run ended early"; }
  sleep 0.1
done
grep '"name":"bronze"' progress.jsonl | grep -q '"numInputRows":3' ||
  { cat run.log; fail "no batch of bronze read the 3 records"; }
grep '"name":"to_out"' progress.jsonl | grep -q '"numInputRows":3' ||
  { cat run.log; fail "no batch of the sink's flow read the 3 records"; }
[[ -n "${url}" ]] || { cat run.log; fail "no monitoring URL"; }
url="${url%/}"
curl -sf "${url}/" > ui.html || fail "GET /"
curl -sf "${url}/api/v1/queries" > api_queries.json || fail "GET /api/v1/queries"
qid=$(grep -o '"id":"[^"]*"' api_queries.json | head -1 | cut -d'"' -f4)
[[ -n "${qid}" ]] || fail "no query in /api/v1/queries: $(cat api_queries.json)"
curl -sf "${url}/api/v1/queries/${qid}/progress" > api_progress.json || fail "GET progress"
curl -sf "${url}/metrics" > metrics.txt || fail "GET /metrics"
curl -sf "${url}/healthz" > healthz.txt || fail "GET /healthz"
kill -INT "${RUN_PID}"
wait "${RUN_PID}"
rc=$?
RUN_PID=""
[[ ${rc} -eq 0 ]] || { cat run.log; fail "sluice run exited ${rc} after SIGINT"; }

"${SLUICE}" sql --warehouse wh "SHOW STREAMING TABLES" > show.txt 2>&1 || fail "SHOW: $(cat show.txt)"
"${SLUICE}" sql --warehouse wh "SHOW SINKS" > show_sinks.txt 2>&1 ||
  fail "SHOW SINKS: $(cat show_sinks.txt)"
grep -q "redacted" show_sinks.txt || fail "SHOW SINKS does not redact the JAAS option: $(cat show_sinks.txt)"
# The sink wrote the 3 records (its secret() resolved), read back by a batch read_kafka whose
# secret() option resolves too.
"${SLUICE}" sql --warehouse wh --format csv "SELECT count(*) AS n FROM read_kafka(
    bootstrapServers => '${KAFKA_BOOTSTRAP}', subscribe => 'out',
    \`kafka.sasl.password\` => secret('kafka', 'batch-pw'))" > batch_read.txt 2>&1 ||
  fail "batch read_kafka: $(cat batch_read.txt)"
[[ "$(tail -n 1 batch_read.txt | tr -d '\r"')" == "3" ]] ||
  fail "the sink's topic holds $(cat batch_read.txt) records, want 3"
if "${SLUICE}" sql --warehouse wh "SELECT * FROM read_kafka(bootstrapServers => '${KAFKA_BOOTSTRAP}',
    subscribe => 'out', \`kafka.sasl.password\` => secret('kafka', 'batch-missing'))" \
    > batch_missing.txt 2>&1; then
  fail "a batch read with a missing secret was accepted"
fi
grep -q "SLUICE_SECRET_KAFKA_BATCH_MISSING" batch_missing.txt ||
  fail "the batch read's error does not name the variable: $(cat batch_missing.txt)"
"${SLUICE}" sql --warehouse wh "DESCRIBE bronze" > describe.txt 2>&1 || fail "DESCRIBE: $(cat describe.txt)"
"${SLUICE}" sql --warehouse wh "DESCRIBE HISTORY bronze" > history.txt 2>&1 ||
  fail "DESCRIBE HISTORY: $(cat history.txt)"
"${SLUICE}" sql --warehouse wh "SELECT * FROM streaming_progress('bronze')" > progress_sql.txt 2>&1 ||
  fail "streaming_progress: $(cat progress_sql.txt)"
"${SLUICE}" checkpoint inspect wh/_checkpoints/bronze > inspect.txt 2>&1 ||
  fail "checkpoint inspect: $(cat inspect.txt)"
"${SLUICE}" table history wh/bronze > table_history.txt 2>&1 || fail "table history: $(cat table_history.txt)"

# A secret() reference that resolves to nothing: the error names the variable, not a value.
sed "s/'key-password'/'missing'/; s/TABLE bronze/TABLE other/" pipeline.sql > missing.sql
if "${SLUICE}" run missing.sql --warehouse wh --max-restarts 0 > missing.log 2>&1; then
  fail "a missing secret was accepted"
fi
grep -q "SLUICE_SECRET_KAFKA_MISSING" missing.log || fail "the error does not name the variable: $(cat missing.log)"

# The search: every file under the work directory, outputs included.
for planted in "${FROM_ENV}" "${SINK_SECRET}" "${BATCH_SECRET}"; do
  leaks=$(grep -rl --binary-files=text "${planted}" . || true)
  [[ -z "${leaks}" ]] || fail "the secret() value ${planted} is in: ${leaks}"
done
leaks=$(grep -rl --binary-files=text "${LITERAL}" . | sort || true)
expected=$(printf '%s\n' ./missing.sql ./pipeline.sql ./wh/_sluice/streaming_tables/bronze.json \
  ./wh/_sluice/streaming_tables/other.json | sort)
[[ "${leaks}" == "${expected}" ]] || fail "the literal secret is in: $(echo ${leaks})"
for def in wh/_sluice/streaming_tables/bronze.json wh/_sluice/streaming_tables/other.json; do
  n=$(grep -o --binary-files=text "${LITERAL}" "${def}" | wc -l)
  [[ ${n} -eq 1 ]] || fail "${def} holds the literal secret ${n} times (expected once: the query)"
  mode=$(stat -c %a "${def}")
  [[ "${mode}" == "600" ]] || fail "${def} is mode ${mode}, expected 600"
done
grep -q "secret('kafka', 'key-password')" wh/_sluice/streaming_tables/bronze.json ||
  fail "the definition does not keep the secret() reference"
grep -q "secret('kafka', 'sink-jaas')" wh/_sluice/sinks/out_sink.json ||
  fail "the sink's definition does not keep the secret() reference"
mode=$(stat -c %a wh/_sluice/sinks/out_sink.json)
[[ "${mode}" == "600" ]] || fail "wh/_sluice/sinks/out_sink.json is mode ${mode}, expected 600"
files=$(find . -type f | wc -l)
echo "PASS (4 secrets, ${files} files searched)"
