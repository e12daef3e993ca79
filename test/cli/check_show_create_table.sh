#!/usr/bin/env bash
# SHOW CREATE TABLE as a user runs it in `sluice sql` (its one value spans lines, which the SQL
# logic tests cannot hold): the exact statement for a partitioned table with comments and the
# change data feed, nested types and names that need backquotes, a path table, a table created
# with LOCATION, a partition column declared first (the schema's order is kept) and a table with
# table features (deletion vectors); each statement run again under a new name makes the same
# table (the same statement back, the same properties, no protocol key in the configuration).
# Delta's protocol properties in TBLPROPERTIES: met ones are dropped, higher ones refused.
# Spark 4.2 + Delta refuses SHOW CREATE TABLE for Delta tables; the layout is Spark's (asked:
# docs/differences.md "Catalog statements").
# Usage: check_show_create_table.sh <sluice binary>
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SLUICE="$(realpath "$1")"
enter_work_dir

# stmt <table>: the createtab_stmt of SHOW CREATE TABLE <table>, exactly (its final newline kept).
stmt() {
  "${SLUICE}" sql -w wh --format json "SHOW CREATE TABLE $1" |
    python3 -c 'import json, sys; sys.stdout.write(json.loads(sys.stdin.readline())["createtab_stmt"]); sys.stdout.write("|")'
}
# expect <name> <table> <expected statement>: compares exactly (a trailing '|' keeps the newline).
expect() {
  local got
  got="$(stmt "$2")"
  if [[ "${got}" == "$3|" ]]; then pass; else
    fail "$1: SHOW CREATE TABLE $2 gave:"
    echo "${got}"
    echo "--- expected:"
    echo "$3|"
  fi
}
# config <table dir>: the configuration of the table's latest metaData action, as JSON.
config() {
  python3 - "$1" <<'EOF'
import glob, json, sys
conf = None
for f in sorted(glob.glob(sys.argv[1] + "/_delta_log/*.json")):
    for line in open(f):
        a = json.loads(line)
        if "metaData" in a:
            conf = a["metaData"].get("configuration", {})
print(json.dumps(conf, sort_keys=True))
EOF
}

"${SLUICE}" sql -w wh >/dev/null <<EOF || { echo "FAIL setup"; exit 1; }
CREATE TABLE events (id BIGINT NOT NULL COMMENT 'the id', s STRING, d DATE) PARTITIONED BY (d) COMMENT 'a table' TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true', 'mykey' = 'v1');
CREATE TABLE nested (id BIGINT, m MAP<STRING, INT>, st STRUCT<a: INT, \`b-c\`: STRING>, arr ARRAY<STRUCT<x: DOUBLE>>, \`select\` DECIMAL(10,2) COMMENT 'it''s a \\\\ b') COMMENT 'nested''s';
CREATE TABLE delta.\`${WORK}/pathtab\` (id BIGINT, s STRING);
CREATE TABLE ext (id BIGINT) LOCATION '${WORK}/ext_dir';
CREATE TABLE first_part (d DATE, id BIGINT) PARTITIONED BY (d);
CREATE TABLE dv (id BIGINT) TBLPROPERTIES ('delta.enableDeletionVectors' = 'true');
EOF

events_stmt="CREATE TABLE spark_catalog.default.events (
  id BIGINT NOT NULL COMMENT 'the id',
  s STRING,
  d DATE)
USING delta
PARTITIONED BY (d)
COMMENT 'a table'
TBLPROPERTIES (
  'delta.enableChangeDataFeed' = 'true',
  'delta.minReaderVersion' = '1',
  'delta.minWriterVersion' = '4',
  'mykey' = 'v1')
"
expect "partitioned, comments, CDF" events "${events_stmt}"

# A name is quoted as Spark's quoteIfNeeded does: when not letters, digits and _ (a keyword such
# as select is not quoted: Spark's DDL reads it as a name).
nested_stmt="CREATE TABLE spark_catalog.default.nested (
  id BIGINT,
  m MAP<STRING, INT>,
  st STRUCT<a: INT, \`b-c\`: STRING>,
  arr ARRAY<STRUCT<x: DOUBLE>>,
  select DECIMAL(10,2) COMMENT 'it\\'s a \\\\ b')
USING delta
COMMENT 'nested\\'s'
TBLPROPERTIES (
  'delta.minReaderVersion' = '1',
  'delta.minWriterVersion' = '2')
"
expect "nested types, quoted names, escaped comments" nested "${nested_stmt}"

expect "a path table" "delta.\`${WORK}/pathtab\`" "CREATE TABLE delta.\`${WORK}/pathtab\` (
  id BIGINT,
  s STRING)
USING delta
LOCATION '${WORK}/pathtab'
TBLPROPERTIES (
  'delta.minReaderVersion' = '1',
  'delta.minWriterVersion' = '2')
"

expect "a table created with LOCATION" ext "CREATE TABLE spark_catalog.default.ext (
  id BIGINT)
USING delta
LOCATION 'file:${WORK}/ext_dir'
TBLPROPERTIES (
  'delta.minReaderVersion' = '1',
  'delta.minWriterVersion' = '2')
"

expect "a partition column declared first keeps its place" first_part \
  "CREATE TABLE spark_catalog.default.first_part (
  d DATE,
  id BIGINT)
USING delta
PARTITIONED BY (d)
TBLPROPERTIES (
  'delta.minReaderVersion' = '1',
  'delta.minWriterVersion' = '2')
"

dv_stmt="CREATE TABLE spark_catalog.default.dv (
  id BIGINT)
USING delta
TBLPROPERTIES (
  'delta.enableDeletionVectors' = 'true',
  'delta.feature.appendOnly' = 'supported',
  'delta.feature.deletionVectors' = 'supported',
  'delta.feature.invariants' = 'supported',
  'delta.minReaderVersion' = '3',
  'delta.minWriterVersion' = '7')
"
expect "table features" dv "${dv_stmt}"

# Each statement again under a new name: the same statement back, and the configuration of the
# new table holds no protocol key (Delta keeps them out of it).
roundtrip() {  # roundtrip <table> <statement>
  local again="${2//spark_catalog.default.$1 (/spark_catalog.default.$1_again (}"
  if ! out="$("${SLUICE}" sql -w wh "${again}" 2>&1)"; then
    fail "round trip of $1: the statement was refused: ${out}"
    return
  fi
  expect "round trip of $1" "$1_again" "${again}"
  local conf
  conf="$(config "wh/$1_again")"
  [[ "${conf}" != *minReaderVersion* && "${conf}" != *minWriterVersion* &&
    "${conf}" != *delta.feature.* ]] && pass || fail "round trip of $1: configuration ${conf}"
}
roundtrip events "${events_stmt}"
roundtrip dv "${dv_stmt}"
roundtrip nested "${nested_stmt}"

# Delta's protocol properties ask for a protocol, which is made as Delta 4.4 makes it (asked of
# Spark: docs/differences.md "Catalog statements"): the smallest legacy protocol with exactly
# the features asked and needed, else table features; the keys are not stored.
protocol() {  # the protocol action of the newest commit of table $1 that has one
  for f in $(ls -r "$1"/_delta_log/*.json); do
    if grep -q '"protocol"' "$f"; then grep '"protocol"' "$f"; return; fi
  done
}
check "writer version 5 without column mapping is 1/4, as Delta" 0 "" -- \
  "${SLUICE}" sql -w wh "CREATE TABLE p1 (id BIGINT) TBLPROPERTIES ('delta.minWriterVersion' = '5')"
[[ "$(protocol wh/p1)" == '{"protocol":{"minReaderVersion":1,"minWriterVersion":4}}' ]] &&
  pass || fail "p1's protocol: $(protocol wh/p1)"
check "a feature asked" 0 "" -- \
  "${SLUICE}" sql -w wh "CREATE TABLE p2 (id BIGINT) TBLPROPERTIES ('delta.feature.changeDataFeed' = 'supported')"
[[ "$(protocol wh/p2)" == '{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["changeDataFeed","invariants","appendOnly"]}}' ]] &&
  pass || fail "p2's protocol: $(protocol wh/p2)"
[[ "$(config wh/p2)" == '{}' ]] && pass || fail "p2 kept a protocol key: $(config wh/p2)"
check "a version that is no number" 1 "delta.minReaderVersion = 'x': expected a protocol version" -- \
  "${SLUICE}" sql -w wh "CREATE TABLE p3 (id BIGINT) TBLPROPERTIES ('delta.minReaderVersion' = 'x')"
[[ ! -e wh/p3 ]] && pass || fail "the refused CREATE left wh/p3"
check "a feature Sluice does not write" 1 "Sluice does not write the table feature 'rowTracking'" -- \
  "${SLUICE}" sql -w wh "CREATE TABLE p5 (id BIGINT) TBLPROPERTIES ('delta.feature.rowTracking' = 'supported')"
check "ALTER: a met request" 0 "" -- \
  "${SLUICE}" sql -w wh "ALTER TABLE events SET TBLPROPERTIES ('delta.minWriterVersion' = '4', 'k2' = 'x')"
[[ "$(config wh/events)" == '{"delta.enableChangeDataFeed": "true", "k2": "x", "mykey": "v1"}' ]] &&
  pass || fail "ALTER kept a protocol key: $(config wh/events)"
check "ALTER: 3/7 with nothing more to support keeps 1/4" 0 "" -- \
  "${SLUICE}" sql -w wh "ALTER TABLE events SET TBLPROPERTIES ('delta.minReaderVersion' = '3', 'delta.minWriterVersion' = '7')"
check "ALTER: 1/4 kept" 0 "delta.minWriterVersion,4" -- \
  "${SLUICE}" sql -w wh --format csv "SHOW TBLPROPERTIES events ('delta.minWriterVersion')"
check "CTAS: 1/7 asked, no feature needed: 1/1" 0 "" -- \
  "${SLUICE}" sql -w wh "CREATE TABLE p4 TBLPROPERTIES ('delta.minWriterVersion' = '7') AS SELECT 1 AS a"
[[ "$(protocol wh/p4)" == '{"protocol":{"minReaderVersion":1,"minWriterVersion":1}}' ]] &&
  pass || fail "p4's protocol: $(protocol wh/p4)"

# Nested NOT NULL and COMMENT are refused, not dropped.
check "nested NOT NULL" 1 "column 'st': NOT NULL on a field inside its type" -- \
  "${SLUICE}" sql -w wh "CREATE TABLE n1 (st STRUCT<a: INT NOT NULL>)"
check "nested COMMENT" 1 "column 'st': COMMENT on a field inside its type" -- \
  "${SLUICE}" sql -w wh "CREATE TABLE n2 (st STRUCT<a: INT COMMENT 'x'>)"
check "a field named comment is no COMMENT" 0 "" -- \
  "${SLUICE}" sql -w wh "CREATE TABLE n3 (st STRUCT<comment: STRING>)"

check "a missing table" 1 "table nosuch does not exist" -- "${SLUICE}" sql -w wh "SHOW CREATE TABLE nosuch"

finish
