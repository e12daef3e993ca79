#!/usr/bin/env bash
# Expectations in a pipeline run by `sluice run` (docs/pipelines.md "Expectations"): DROP ROW and
# warn on a streaming table, counts under each batch line, in the progress log and as the run's
# totals; a materialized view's expectations; FAIL UPDATE stopping the run with nothing of the
# batch written; a run killed mid-batch (right after the sink write, before the commit) then run
# again writes every row once and counts every row once.
# Usage: check_pipeline_expectations.sh <sluice binary>
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SLUICE="$(realpath "$1")"
WORK="$(mktemp -d)"
trap 'rm -rf "${WORK}"' EXIT
cd "${WORK}"

mkdir landing
printf '%s\n' '{"k":"a","v":1}' '{"k":"b","v":-2}' '{"k":null,"v":3}' > landing/1.json
printf '%s\n' '{"k":"a","v":-4}' '{"k":"c","v":5}' > landing/2.json

cat > p.sql <<'SQL'
CREATE MATERIALIZED VIEW totals (
  CONSTRAINT big_enough EXPECT (total > 4) ON VIOLATION DROP ROW
) AS SELECT k, CAST(sum(v) AS BIGINT) AS total FROM LIVE.bronze GROUP BY k;

CREATE OR REFRESH STREAMING TABLE bronze (
  CONSTRAINT positive EXPECT (v > 0) ON VIOLATION DROP ROW,
  CONSTRAINT has_k EXPECT (k IS NOT NULL)
) TRIGGER AVAILABLE NOW AS
SELECT * FROM STREAM read_files('landing/', format => 'json', schema => 'k STRING, v BIGINT',
                                maxFilesPerTrigger => 1);
SQL

# 1. A run: two batches (one file each), the counts under each batch line, then the totals.
"${SLUICE}" run p.sql -w wh --progress-log progress.jsonl > run1.log 2>&1 && pass ||
  { fail "run 1"; cat run1.log; }
check "batch 0 counts" 0 "bronze               expectations: positive 2 passed, 1 failed, has_k 2 passed, 1 failed; 1 row dropped" -- cat run1.log
check "batch 1 counts" 0 "bronze               expectations: positive 1 passed, 1 failed, has_k 2 passed, 0 failed; 1 row dropped" -- cat run1.log
check "run totals" 0 "expectations of bronze (2 batches): positive 3 passed, 2 failed, has_k 4 passed, 1 failed; 2 rows dropped" -- cat run1.log
check "view counts" 0 "refreshed totals (materialized view, full recompute); expectations: big_enough 1 passed, 2 failed; 2 rows dropped" -- cat run1.log
check "bronze rows" 0 "3,9,1" -- "${SLUICE}" sql -w wh --format csv \
  "SELECT count(*), sum(v), count_if(k IS NULL) FROM bronze"
check "view rows" 0 "c,5" -- "${SLUICE}" sql -w wh --format csv "SELECT k, total FROM totals"
check "progress log" 0 '"observedMetrics":{"data_quality":{"dropped_records":1,"expectations":[{"name":"positive","dataset":"bronze","passed_records":2,"failed_records":1},{"name":"has_k","dataset":"bronze","passed_records":2,"failed_records":1}]}}' -- cat progress.jsonl

# 2. Killed right after a batch's sink write (before commits/<N>): the next run re-runs the
# batch; every row is written once and counted once.
printf '%s\n' '{"k":"d","v":-6}' '{"k":"d","v":7}' > landing/3.json
SLUICE_CRASH_AT=after_sink_write "${SLUICE}" run p.sql -w wh > run2.log 2>&1
code=$?
[[ ${code} -eq 137 ]] && pass || { fail "run 2 should die at the crash point (exit ${code})"; cat run2.log; }
"${SLUICE}" run p.sql -w wh > run3.log 2>&1 && pass || { fail "run 3"; cat run3.log; }
check "re-run counted" 0 "expectations of bronze (1 batch): positive 1 passed, 1 failed, has_k 2 passed, 0 failed; 1 row dropped" -- cat run3.log
check "rows once" 0 "4,4" -- "${SLUICE}" sql -w wh --format csv "SELECT count(*), count(DISTINCT v) FROM bronze"
check "counted once" 0 "3,3,3" -- "${SLUICE}" sql -w wh --format csv \
  "SELECT count(*), count(DISTINCT batch_id), sum(CAST(progress->>'\$.observedMetrics.data_quality.dropped_records' AS BIGINT)) FROM streaming_progress('bronze')"

# 3. FAIL UPDATE: the run stops naming the expectation and the row; the batch is not written.
cat > strict.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE strict (
  CONSTRAINT has_k EXPECT (k IS NOT NULL) ON VIOLATION FAIL UPDATE
) TRIGGER AVAILABLE NOW AS
SELECT * FROM STREAM read_files('landing/', format => 'json', schema => 'k STRING, v BIGINT');
SQL
check "fail update" 1 "expectation 'has_k' of 'strict' failed (ON VIOLATION FAIL UPDATE) in batch 0: a row violates (k IS NOT NULL): {\"k\":null,\"v\":3,\"_rescued_data\":null}; nothing of it was written" -- \
  "${SLUICE}" run strict.sql -w wh
check "not restarted" 1 "(not restarted: invalid query, data or options)" -- "${SLUICE}" run strict.sql -w wh
check "nothing written" 0 "0" -- "${SLUICE}" sql -w wh --format csv \
  "SELECT count(*) FROM (SELECT 1 FROM streaming_progress('strict') WHERE batch_id IS NOT NULL)"

# 4. A materialized view's FAIL UPDATE fails its refresh and keeps the old result.
cat > mv_fail.sql <<'SQL'
CREATE MATERIALIZED VIEW totals (
  CONSTRAINT small EXPECT (total < 6) ON VIOLATION FAIL UPDATE
) AS SELECT k, CAST(sum(v) AS BIGINT) AS total FROM bronze GROUP BY k;
SQL
check "view fail update" 1 "expectation 'small' of 'totals' failed (ON VIOLATION FAIL UPDATE) in its refresh: a row violates (total < 6)" -- \
  "${SLUICE}" run mv_fail.sql -w wh
check "old view kept" 0 "c,5" -- "${SLUICE}" sql -w wh --format csv "SELECT k, total FROM totals ORDER BY k"

finish
