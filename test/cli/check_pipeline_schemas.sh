#!/usr/bin/env bash
# `sluice run` (and --dry-run) binds every query of a pipeline against its inputs' schemas before
# anything is created (docs/pipelines.md "What is checked when"): an unknown column, an unknown
# function, a type error, a WATERMARK on a non-timestamp, a STREAM over a materialized view, an
# expectation that is not BOOLEAN, a planner refusal, a column Delta cannot store and output that
# does not fit the table each give an error naming file:line, the dataset and the column, and the
# warehouse is left as it was (no table, checkpoint or catalog entry). `sluice sql` refuses a
# CREATE STREAMING TABLE that does not bind, and a failed REFRESH prints its error once.
# Usage: check_pipeline_schemas.sh <sluice binary>
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SLUICE="$(realpath "$1")"
enter_work_dir

"${SLUICE}" sql -w wh >/dev/null <<'SQL' || { echo "FAIL setup"; exit 1; }
CREATE TABLE src (id BIGINT, ts TIMESTAMP, s STRING);
INSERT INTO src VALUES (1, TIMESTAMP '2024-01-01 00:00:00', 'a'), (2, TIMESTAMP '2024-01-01 00:00:05', 'b');
SQL
snapshot() { find wh | sort; }
snapshot > before.txt
unchanged() {  # unchanged <name>: the warehouse holds what before.txt lists, nothing more
  snapshot > after.txt
  diff before.txt after.txt > diff.txt && pass || { fail "$1: the warehouse changed"; cat diff.txt; }
}

# run_bad <name> <file> <expected error line>: --dry-run and a run both refuse, naming it.
run_bad() {
  local name="$1" file="$2" want="$3"
  check "${name} (dry run)" 1 "${want}" -- "${SLUICE}" run "${file}" -w wh --dry-run
  check "${name}" 1 "${want}" -- "${SLUICE}" run "${file}" -w wh --triggered
  check "${name}: says so" 1 "Error: the pipeline is not valid; nothing was created or run" -- \
    "${SLUICE}" run "${file}" -w wh
  unchanged "${name}"
}

# 1. An unknown column, in a dataset declared above the one it reads (bronze has no table yet:
# silver is checked against the schema of bronze's query).
cat > column.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE silver AS
  SELECT id, bad_col FROM STREAM LIVE.bronze;
CREATE OR REFRESH STREAMING TABLE bronze AS SELECT id, s, ts FROM STREAM src;
SQL
run_bad "unknown column" column.sql \
  "Error: column.sql:1: streaming table 'silver': Binder Error: Referenced column \"bad_col\" not found in FROM clause!"

# 2. An unknown function, and a type error.
cat > function.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE bronze AS SELECT id, s, ts FROM STREAM src;
CREATE OR REFRESH STREAMING TABLE f AS SELECT no_such_function(id) AS x FROM STREAM bronze;
CREATE OR REFRESH STREAMING TABLE t AS SELECT id + s AS x FROM STREAM bronze;
SQL
run_bad "unknown function" function.sql "Error: function.sql:2: streaming table 'f': Catalog Error: Scalar Function with name no_such_function does not exist!"
check "type error" 1 "Error: function.sql:3: streaming table 't': Binder Error: No function matches the given name and argument types '+(BIGINT, VARCHAR)'" -- \
  "${SLUICE}" run function.sql -w wh --dry-run
check_not "one line per error" "Candidate functions" -- "${SLUICE}" run function.sql -w wh --dry-run

# 3. A WATERMARK on a column that is not a timestamp.
cat > watermark.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE w OUTPUT MODE APPEND AS
SELECT window.start AS w, count(*) AS n
FROM STREAM src WATERMARK s DELAY OF INTERVAL 10 SECONDS AS e
GROUP BY window(e.s, '10 seconds');
SQL
run_bad "watermark type" watermark.sql "Error: watermark.sql:1: streaming table 'w': WATERMARK s of e: the event-time column s is VARCHAR, not a TIMESTAMP"

# 4. A STREAM over a materialized view (the graph's check, still nothing created).
cat > mv_stream.sql <<'SQL'
CREATE OR REFRESH MATERIALIZED VIEW m AS SELECT s, CAST(count(*) AS BIGINT) AS n FROM src GROUP BY s;
CREATE OR REFRESH STREAMING TABLE r AS SELECT * FROM STREAM m;
SQL
run_bad "stream over a materialized view" mv_stream.sql "Error: mv_stream.sql:2: streaming table 'r' reads materialized view 'm' (mv_stream.sql:1) as a STREAM"

# 5. A materialized view that does not bind, one over an upstream's derived schema, and a column
# type Delta cannot store.
cat > mv.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE bronze TRIGGER AVAILABLE NOW AS SELECT id, s FROM STREAM src;
CREATE OR REFRESH MATERIALIZED VIEW m AS SELECT s, nope FROM bronze;
CREATE OR REFRESH MATERIALIZED VIEW h AS SELECT CAST(id AS HUGEINT) AS big FROM bronze;
SQL
run_bad "materialized view" mv.sql "Error: mv.sql:2: materialized view 'm': Binder Error: Referenced column \"nope\" not found in FROM clause!"
check "materialized view type" 1 "Error: mv.sql:3: materialized view 'h': column 'big': type HUGEINT has no Delta equivalent" -- \
  "${SLUICE}" run mv.sql -w wh --dry-run

# 6. An expectation that is not BOOLEAN, a planner refusal (APPEND aggregation without a
# watermark) and output that does not fit the declared columns.
cat > more.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE e (CONSTRAINT numeric EXPECT (id + 1)) AS SELECT id FROM STREAM src;
CREATE OR REFRESH STREAMING TABLE a AS SELECT s, count(*) AS n FROM STREAM src GROUP BY s;
CREATE OR REFRESH STREAMING TABLE d (id BIGINT) AS SELECT s AS id FROM STREAM src;
SQL
run_bad "expectation type" more.sql "Error: more.sql:1: streaming table 'e': expectation 'numeric' of 'e': its condition (id + 1) is BIGINT, not BOOLEAN"
check "planner refusal" 1 "Error: more.sql:2: streaming table 'a': " -- "${SLUICE}" run more.sql -w wh --dry-run
check "planner refusal says why" 1 "Append output mode not supported" -- "${SLUICE}" run more.sql -w wh --dry-run
check "declared columns" 1 "Error: more.sql:3: streaming table 'd': its query's output cannot be written to the table d: " -- \
  "${SLUICE}" run more.sql -w wh --dry-run

# 6b. A table that only flows fill: its expectations are bound over its declared columns, and
# its flows against it.
cat > flows.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE all_ids (id BIGINT, CONSTRAINT c EXPECT (idd > 0));
CREATE FLOW f AS INSERT INTO all_ids BY NAME SELECT id FROM STREAM src;
CREATE FLOW g AS INSERT INTO all_ids BY NAME SELECT s AS id FROM STREAM src;
SQL
run_bad "expectation of a flows' table" flows.sql "Error: flows.sql:1: streaming table 'all_ids': expectation 'c' of 'all_ids': cannot evaluate (idd > 0)"
sed 's/idd > 0/id > 0/' flows.sql > flows2.sql
run_bad "flow into declared columns" flows2.sql "Error: flows2.sql:3: flow 'g': its query's output cannot be written to the table all_ids: "
check_not "the good flow passes" "flow 'f'" -- "${SLUICE}" run flows2.sql -w wh --dry-run

# 7. A valid pipeline (bronze declared last, a materialized view over it, a stream-static join
# with the view) checks, then runs.
cat > good.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE joined TRIGGER AVAILABLE NOW AS
  SELECT b.id, m.n FROM STREAM LIVE.bronze b JOIN LIVE.m ON m.s = b.s;
CREATE OR REFRESH MATERIALIZED VIEW m AS SELECT s, CAST(count(*) AS BIGINT) AS n FROM bronze GROUP BY s;
CREATE OR REFRESH STREAMING TABLE bronze TRIGGER AVAILABLE NOW AS SELECT id, s, ts FROM STREAM src;
SQL
check "valid pipeline" 0 "valid: 2 streaming tables, 1 materialized view" -- "${SLUICE}" run good.sql -w wh --dry-run
unchanged "dry run of a valid pipeline"
"${SLUICE}" run good.sql -w wh > good.log 2>&1 && pass || { fail "run the valid pipeline"; cat good.log; }
check "its rows" 0 "1,1" -- "${SLUICE}" sql -w wh --format csv "SELECT id, n FROM joined ORDER BY id"
# Run again: its tables exist now, readers are checked against their Delta schemas.
"${SLUICE}" run good.sql -w wh > good2.log 2>&1 && pass || { fail "run it again"; cat good2.log; }
# bronze's new query adds a column that its readers (a streaming table and the materialized
# view) read: checked against the schema bronze's table will have, not the one it has.
sed -e 's/SELECT id, s, ts FROM STREAM src/SELECT id, s, ts, id * 10 AS big FROM STREAM src/' \
    -e 's/SELECT b.id, m.n FROM/SELECT b.id, b.big, m.n, m.top FROM/' \
    -e 's/CAST(count(\*) AS BIGINT) AS n FROM bronze/CAST(count(*) AS BIGINT) AS n, max(big) AS top FROM bronze/' \
    good.sql > grown.sql
grep -q "max(big)" grown.sql && grep -q "b.big" grown.sql || fail "could not write grown.sql"
check "a new upstream column" 0 "valid: 2 streaming tables, 1 materialized view" -- \
  "${SLUICE}" run grown.sql -w wh --dry-run

# 8. A new warehouse is not created by a check, valid or not.
mkdir landing && echo '{"k":"a","v":1}' > landing/1.json
cat > files.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE silver AS SELECT k, v * 2 AS v2 FROM STREAM bronze;
CREATE OR REFRESH STREAMING TABLE bronze AS
  SELECT * FROM STREAM read_files('landing/', format => 'json', schema => 'k STRING, v BIGINT');
SQL
check "no warehouse yet" 0 "valid: 2 streaming tables" -- "${SLUICE}" run files.sql -w newwh --dry-run
sed 's/v \* 2/w * 2/' files.sql > files_bad.sql
check "no warehouse yet, an error" 1 "Error: files_bad.sql:1: streaming table 'silver': Binder Error: Referenced column \"w\" not found" -- \
  "${SLUICE}" run files_bad.sql -w newwh --dry-run
check "no warehouse yet, run" 1 "Error: the pipeline is not valid; nothing was created or run" -- \
  "${SLUICE}" run files_bad.sql -w newwh
[[ ! -e newwh ]] && pass || fail "the check created the warehouse"

# 9. sluice sql: CREATE STREAMING TABLE checks its query; nothing is stored.
check "sql: unknown column at CREATE" 1 "CREATE STREAMING TABLE a: Binder Error: Referenced column \"nosuch\" not found in FROM clause!" -- \
  "${SLUICE}" sql -w wh "CREATE STREAMING TABLE a AS SELECT nosuch FROM STREAM src"
[[ ! -e wh/_checkpoints/a ]] && pass || fail "sql: a checkpoint was made"
check "sql: not a streaming table" 1 "a is not a streaming table" -- "${SLUICE}" sql -w wh "REFRESH STREAMING TABLE a"

# 10. A REFRESH that fails prints its error once (not also as an ERROR log line).
"${SLUICE}" sql -w wh "CREATE TABLE num (v INT); INSERT INTO num VALUES (0)" > /dev/null
"${SLUICE}" sql -w wh "CREATE STREAMING TABLE inv AS SELECT CAST('x' || v AS INT) AS bad FROM STREAM num" > /dev/null 2>&1 ||
  fail "10: create"
"${SLUICE}" sql -w wh "REFRESH STREAMING TABLE inv" > refresh.log 2>&1
[[ $? -eq 1 ]] && pass || { fail "10: the refresh did not fail"; cat refresh.log; }
[[ $(grep -c "terminated with exception" refresh.log) -eq 1 ]] && pass ||
  { fail "10: the error is not printed once"; cat refresh.log; }
check_not "10: no ERROR log line" "ERROR stream/micro_batch_execution" -- cat refresh.log

finish
