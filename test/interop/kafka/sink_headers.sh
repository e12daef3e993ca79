#!/usr/bin/env bash
# The Kafka sink's headers column read back by a consumer that is not Sluice (kcat): a flow into
# a sink (CREATE SINK ... USING kafka, CREATE FLOW ... INSERT INTO) copies records with their
# headers (read_kafka's includeHeaders column, passed through) and adds one built with Spark's
# array(named_struct(...)); kcat must print the same headers in the same order, the repeated key
# kept, a record without headers with none. Also a transactional sink, read with read_committed.
#
# On the real broker through with_broker.sh (SLUICE_KAFKA_BOOTSTRAP), else on the mock cluster.
# Usage: sink_headers.sh <sluice> <sluice_mock_kafka>
set -uo pipefail
SLUICE="$(realpath "$1")"
MOCK="$(realpath "$2")"
fail() { echo "FAIL: $*"; exit 1; }
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
start_mock_kafka "${MOCK}" in:1 out:1 out_eo:1 markers:1 || fail "the cluster did not start"
B="${KAFKA_BOOTSTRAP}"

# Three records: two headers with the same key and one more, none, one header.
kcat -P -b "${B}" -t in -p 0 -H trace=t-1 -H trace=t-2 -H user=ann <<< "a" || fail "kcat -P"
kcat -P -b "${B}" -t in -p 0 <<< "b" || fail "kcat -P"
kcat -P -b "${B}" -t in -p 0 -H trace=t-3 <<< "c" || fail "kcat -P"

copy_flow() {  # copy_flow SINK FLOW: value and headers, plus a header 'src' on records with some
  cat << EOF
CREATE FLOW $2 AS INSERT INTO $1
SELECT value,
       CASE WHEN headers IS NULL THEN NULL
            ELSE concat(headers, array(named_struct('key', 'src', 'value', CAST('sluice' AS BINARY))))
       END AS headers
FROM STREAM read_kafka(bootstrapServers => '${B}', subscribe => 'in',
                       startingOffsets => 'earliest', includeHeaders => true);
EOF
}
{
  echo "CREATE SINK out USING kafka OPTIONS ('kafka.bootstrap.servers' '${B}', 'topic' 'out');"
  copy_flow out copy
  echo "REFRESH SINK out;"
  echo "CREATE SINK out_eo USING kafka OPTIONS ('kafka.bootstrap.servers' '${B}', 'topic' 'out_eo',"
  echo "  'kafka.transactional.id' 'headers-eo-1', 'transactionMarkerTopic' 'markers');"
  copy_flow out_eo copy_eo
  echo "REFRESH SINK out_eo;"
} > pipeline.sql
"${SLUICE}" sql --warehouse wh -f pipeline.sql > sql.log 2>&1 || { cat sql.log; fail "sluice sql"; }

want=$'a trace=t-1,trace=t-2,user=ann,src=sluice\nb \nc trace=t-3,src=sluice'
for topic in out out_eo; do
  got=$(kcat -C -b "${B}" -t "${topic}" -o beginning -e -q -X isolation.level=read_committed \
    -f '%s %h\n' 2> kcat.log) || { cat kcat.log; fail "kcat -C ${topic}"; }
  [[ "${got}" == "${want}" ]] ||
    fail "kcat read from ${topic}:"$'\n'"${got}"$'\n'"want:"$'\n'"${want}"
  echo "ok: ${topic}: kcat reads the 3 records with their headers"
done
echo "PASS"
