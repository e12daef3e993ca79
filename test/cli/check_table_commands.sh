#!/usr/bin/env bash
# `sluice table history|detail|vacuum|optimize PATH|NAME` as a user runs them: a table made with
# `sluice sql`, delta-rs and Spark fixtures of test/fixtures/delta (read in place, maintained on
# copies), --json output
# parsed back, and the errors for a missing path and a directory that is not a Delta table.
# Usage: check_table_commands.sh <sluice binary>
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SLUICE="$(realpath "$1")"
FIXTURES="$(cd "$(dirname "$0")/../fixtures/delta" 2>/dev/null && pwd)"
enter_work_dir
T=wh/ev

"${SLUICE}" sql -w wh >/dev/null <<'EOF2' || { echo "FAIL setup"; exit 1; }
CREATE TABLE ev (id BIGINT, day VARCHAR) PARTITIONED BY (day) TBLPROPERTIES ('owner' = 'ops');
INSERT INTO ev VALUES (1, 'a'), (2, 'b');
INSERT INTO ev VALUES (3, 'a');
INSERT INTO ev VALUES (4, 'a');
DELETE FROM ev WHERE id = 2;
EOF2

# history
check "history: header" 0 "version  timestamp" -- "${SLUICE}" table history "${T}"
check "history: delete with metrics" 0 "DELETE        predicate=[\"id = 2\"]" -- "${SLUICE}" table history "${T}"
check "history: delete metrics" 0 "numDeletedRows=1, numRemovedFiles=1" -- "${SLUICE}" table history "${T}"
check "history: append metrics" 0 "mode=Append, partitionBy=[\"day\"]" -- "${SLUICE}" table history "${T}"
check "history: create" 0 "0        " -- "${SLUICE}" table history "${T}"
check "history: count" 0 "(5 versions)" -- "${SLUICE}" table history "${T}"
check "history: limit" 0 "(2 versions)" -- "${SLUICE}" table history "${T}" --limit 2
check_not "history: limit drops the oldest" "CREATE TABLE" -- "${SLUICE}" table history "${T}" --limit 2
check "history: bad limit" 2 "limit" -- "${SLUICE}" table history "${T}" --limit 0
"${SLUICE}" table history "${T}" --json > history.json
got="$(sql "SELECT count(*) || ',' || max(version) || ',' || min(operation) || ',' ||
                   max(operationMetrics.numDeletedRows) FROM read_json('history.json')")"
[[ "${got}" == "5,4,CREATE TABLE,1" ]] && pass || fail "history --json: ${got}"
first="$(sql "SELECT version FROM read_json('history.json') LIMIT 1")"
[[ "${first}" == "4" ]] && pass || fail "history --json not newest first: ${first}"

# a table named as in SQL: the warehouse's table (-w), a directory of that name winning
check "history by name" 0 "(5 versions)" -- "${SLUICE}" table history ev -w wh
check "detail by name, any case" 0 "format:             delta" -- "${SLUICE}" table detail EV --warehouse wh
check "a name that is no table" 1 "no directory nope and no table 'nope' in the warehouse wh" -- "${SLUICE}" table history nope -w wh

# detail
check "detail: format" 0 "format:             delta" -- "${SLUICE}" table detail "${T}"
check "detail: location" 0 "location:           ${T}" -- "${SLUICE}" table detail "${T}"
check "detail: partitions" 0 "partition columns:  day" -- "${SLUICE}" table detail "${T}"
check "detail: files" 0 "files:              3" -- "${SLUICE}" table detail "${T}"
check "detail: protocol" 0 "min writer version: 2" -- "${SLUICE}" table detail "${T}"
check "detail: properties" 0 "  owner = ops" -- "${SLUICE}" table detail "${T}"
"${SLUICE}" table detail "${T}" --json > detail.json
got="$(sql "SELECT format || ',' || numFiles || ',' || partitionColumns[0] || ',' || minReaderVersion
            FROM read_json('detail.json')")"
[[ "${got}" == "delta,3,day,1" ]] && pass || fail "detail --json: ${got}"

# optimize
check "optimize: data column refused" 1 "Predicate references non-partition column" -- \
  "${SLUICE}" table optimize "${T}" --where "id > 1"
check "optimize: partition b has no file left" 0 "nothing to compact" -- \
  "${SLUICE}" table optimize "${T}" --where "day = 'b'"
check "optimize: compacts" 0 "compacted 3 files" -- "${SLUICE}" table optimize "${T}" --where "day = 'a'"
check "optimize: version" 0 "OPTIMIZE" -- "${SLUICE}" table history "${T}" --limit 1
check "optimize: now 1 file" 0 "files:              1" -- "${SLUICE}" table detail "${T}"
check "optimize: again" 0 "nothing to compact" -- "${SLUICE}" table optimize "${T}"
check "optimize: json" 0 '"version": null' -- "${SLUICE}" table optimize "${T}" --json
got="$(sql "SELECT count(*) || ',' || sum(id) FROM ev")"
[[ "${got}" == "3,8" ]] && pass || fail "rows after optimize: ${got}"

# vacuum: the 3 optimized-away files and the deleted one are older than 0 hours, not than 168.
check "vacuum: default retention keeps them" 0 "would delete 0 files" -- "${SLUICE}" table vacuum "${T}" --dry-run
check "vacuum: short retention refused" 1 "pass --force" -- "${SLUICE}" table vacuum "${T}" --retain 0
check "vacuum: refusal is Delta's" 1 "such a low retention period" -- "${SLUICE}" table vacuum "${T}" --retain 0
check "vacuum: dry run lists" 0 "would delete 4 files" -- "${SLUICE}" table vacuum "${T}" --retain 0 --force --dry-run
check "vacuum: dry run names files" 0 "  ${T}/day=a/part-" -- "${SLUICE}" table vacuum "${T}" --retain 0 --force --dry-run
[[ $(find "${T}" -name '*.parquet' | wc -l) -eq 5 ]] && pass || fail "dry run deleted files"
"${SLUICE}" table vacuum "${T}" --retain 0 --force --dry-run --json > vacuum.json
got="$(sql "SELECT dryRun || ',' || numFiles || ',' || len(files) FROM read_json('vacuum.json')")"
[[ "${got}" == "true,4,4" ]] && pass || fail "vacuum --json: ${got}"
check "vacuum: deletes" 0 "deleted 4 files" -- "${SLUICE}" table vacuum "${T}" --retain 0 --force
[[ $(find "${T}" -name "*.parquet" | wc -l) -eq 1 ]] && pass || fail "vacuum left $(find "${T}" -name '*.parquet' | wc -l) files"
check "vacuum: logged" 0 "VACUUM END" -- "${SLUICE}" table history "${T}" --limit 1
got="$(sql "SELECT count(*) || ',' || sum(id) FROM ev")"
[[ "${got}" == "3,8" ]] && pass || fail "rows after vacuum: ${got}"

# errors
check "missing path" 1 "Error: Not found: ./nope does not exist" -- "${SLUICE}" table detail ./nope
mkdir plain
check "not a Delta table" 1 "plain is not a Delta table (it has no _delta_log directory)" -- \
  "${SLUICE}" table history plain
check "help" 0 "sluice table vacuum warehouse/events --dry-run" -- "${SLUICE}" table --help

# Delta tables written by other engines (test/fixtures/delta): read in place, maintained on a copy.
if [[ -n "${FIXTURES}" && -d "${FIXTURES}/deltars/partitioned" && -d "${FIXTURES}/spark/snapshot-data2" ]]; then
  F="${FIXTURES}/deltars/partitioned"
  check "fixture: detail" 0 "partition columns:  year, month, day" -- "${SLUICE}" table detail "${F}"
  check "fixture: files" 0 "files:              6" -- "${SLUICE}" table detail "${F}"
  check "fixture: history" 0 "(1 version)" -- "${SLUICE}" table history "${F}"
  cp -r "${F}" copy
  check "fixture copy: optimize" 0 "nothing to compact" -- "${SLUICE}" table optimize copy
  check "fixture copy: vacuum dry run" 0 "would delete 0 files" -- "${SLUICE}" table vacuum copy --dry-run
  # Spark: v0 write, v1 append, v2 overwrite; 4 files are tombstones (their data files are kept).
  S="${FIXTURES}/spark/snapshot-data2"
  check "spark fixture: history" 0 "(3 versions)" -- "${SLUICE}" table history "${S}"
  check "spark fixture: files" 0 "files:              2" -- "${SLUICE}" table detail "${S}"
  cp -r "${S}" spark_copy
  check "spark fixture copy: vacuum dry run" 0 "would delete 4 files" -- \
    "${SLUICE}" table vacuum spark_copy --retain 0 --force --dry-run
  check "spark fixture copy: vacuum" 0 "deleted 4 files" -- \
    "${SLUICE}" table vacuum spark_copy --retain 0 --force
  [[ $(find spark_copy -name '*.parquet' | wc -l) -eq 2 ]] && pass || fail "spark copy vacuum left $(find spark_copy -name '*.parquet' | wc -l) files"
else
  fail "the Delta fixtures are missing (test/fixtures/delta: make fixtures writes them)"
fi

finish
