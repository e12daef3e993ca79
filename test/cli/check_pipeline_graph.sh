#!/usr/bin/env bash
# `sluice run` checks a pipeline whole before anything is created or runs (docs/pipelines.md):
# statement order does not matter, LIVE. is accepted, a directory of .sql files is one pipeline,
# and a syntax error, a duplicate, a cycle, an unknown name, a statement that is not a
# declaration or a bad --ui address leaves the warehouse untouched.
# Usage: check_pipeline_graph.sh <sluice binary>
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SLUICE="$(realpath "$1")"
WORK="$(mktemp -d)"
trap 'rm -rf "${WORK}"' EXIT
cd "${WORK}"

mkdir landing
printf '%s\n' '{"k":"a","v":1}' '{"k":"b","v":-2}' '{"k":"a","v":3}' > landing/1.json

# 1. Silver and gold above bronze, gold through LIVE.: run in dependency order.
cat > p.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE gold OUTPUT MODE COMPLETE TRIGGER AVAILABLE NOW AS
SELECT k, sum(v) AS total FROM STREAM(LIVE.silver) GROUP BY k;

CREATE OR REFRESH STREAMING TABLE silver TRIGGER AVAILABLE NOW AS
SELECT k, v FROM STREAM LIVE.bronze WHERE v > 0;

CREATE OR REFRESH STREAMING TABLE bronze TRIGGER AVAILABLE NOW AS
SELECT * FROM STREAM read_files('landing/', format => 'json', schema => 'k STRING, v BIGINT');
SQL
check "dry run" 0 "streaming table bronze (p.sql:7)
streaming table silver (p.sql:4) reads bronze
streaming table gold (p.sql:1) reads silver
valid: 3 streaming tables, 0 materialized views, 0 views, 0 flows, 0 sinks, 0 settings; nothing was created or run" -- \
  "${SLUICE}" run p.sql -w wh --dry-run
[[ ! -e wh ]] && pass || fail "--dry-run created the warehouse"
"${SLUICE}" run p.sql -w wh > run1.log 2>&1 && pass || { fail "run in dependency order"; cat run1.log; }
grep -n '^started' run1.log | head -3 > started.txt
[[ "$(sed -n 1p started.txt)" == *"started bronze"* && "$(sed -n 3p started.txt)" == *"started gold"* ]] &&
  pass || { fail "start order"; cat run1.log; }
check "gold rows" 0 "a,4" -- "${SLUICE}" sql -w wh --format csv "SELECT k, total FROM gold ORDER BY k"
check "silver dropped the negative" 0 "2" -- "${SLUICE}" sql -w wh --format csv "SELECT count(*) FROM silver"

# 2. A syntax error on line 6 creates nothing, and says file:line.
cat > bad.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE t1 TRIGGER AVAILABLE NOW AS
SELECT * FROM STREAM read_files('landing/', format => 'json', schema => 'k STRING, v BIGINT');

-- the next statement starts on line 5 and is wrong on line 6
CREATE OR REFRESH STREAMING TABLE t2
  OUTPUT MODE SIDEWAYS AS SELECT * FROM STREAM t1;
SQL
check "syntax error" 1 "Error: bad.sql:5: syntax error at line 6, column" -- "${SLUICE}" run bad.sql -w wh2
check "nothing created" 1 "" -- test -e wh2
check "says so" 1 "Error: the pipeline is not valid; nothing was created or run" -- \
  "${SLUICE}" run bad.sql -w wh2

# 3. A dataset defined twice: both places, nothing created (not "checkpoint in use").
cat > dup.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE t1 TRIGGER AVAILABLE NOW AS
SELECT * FROM STREAM read_files('landing/', format => 'json', schema => 'k STRING, v BIGINT');
CREATE OR REFRESH STREAMING TABLE T1 TRIGGER AVAILABLE NOW AS
SELECT * FROM STREAM read_files('landing/', format => 'json', schema => 'k STRING, v BIGINT');
SQL
check "duplicate" 1 "Error: dup.sql:3: dataset 't1' is defined twice: as a streaming table at dup.sql:1 and as a streaming table here" -- \
  "${SLUICE}" run dup.sql -w wh2
check "duplicate created nothing" 1 "" -- test -e wh2

# 4. A cycle, and 5. an unknown name, reported together.
cat > cycle.sql <<'SQL'
CREATE STREAMING TABLE a AS SELECT * FROM STREAM b;
CREATE STREAMING TABLE b AS SELECT * FROM STREAM a;
CREATE STREAMING TABLE c AS SELECT * FROM STREAM bronz;
SQL
check "cycle" 1 "Error: cycle.sql:1: the pipeline has a cycle: streaming table 'a' (cycle.sql:1) reads streaming table 'b' (cycle.sql:2), which reads streaming table 'a'" -- \
  "${SLUICE}" run cycle.sql -w wh
check "unknown name" 1 "Error: cycle.sql:3: streaming table 'c' reads 'bronz', which is neither defined in the pipeline nor an existing table" -- \
  "${SLUICE}" run cycle.sql -w wh
# An existing table of the warehouse resolves (bronze was created by run 1).
printf '%s\n' "CREATE STREAMING TABLE c TRIGGER AVAILABLE NOW AS SELECT * FROM STREAM bronze;" > c.sql
check "existing table" 0 "finished c" -- "${SLUICE}" run c.sql -w wh

# 6. Statements that change data are not pipeline statements.
printf '%s\n' "CREATE TABLE x (id INT);" "INSERT INTO x VALUES (1);" > dml.sql
check "dml refused" 1 "Error: dml.sql:2: a pipeline declares datasets" -- "${SLUICE}" run dml.sql -w wh2
check "dml created nothing" 1 "" -- test -e wh2

# 7. A bad --ui address is refused before anything is created.
check "bad ui port" 1 "Error: --ui:" -- "${SLUICE}" run p.sql -w wh2 --ui 99999
check "bad ui created nothing" 1 "" -- test -e wh2

# 8. A directory of .sql files is one pipeline.
mkdir dir
printf '%s\n' "CREATE OR REFRESH STREAMING TABLE d_silver TRIGGER AVAILABLE NOW AS" \
  "SELECT k FROM STREAM d_bronze;" > dir/a_silver.sql
printf '%s\n' "CREATE OR REFRESH STREAMING TABLE d_bronze TRIGGER AVAILABLE NOW AS" \
  "SELECT * FROM STREAM read_files('landing/', format => 'json', schema => 'k STRING, v BIGINT');" \
  > dir/b_bronze.sql
check "directory dry run" 0 "streaming table d_silver (dir/a_silver.sql:1) reads d_bronze" -- \
  "${SLUICE}" run dir -w wh3 --dry-run
"${SLUICE}" run dir -w wh3 > run8.log 2>&1 && pass || { fail "directory run"; cat run8.log; }
check "directory rows" 0 "3" -- "${SLUICE}" sql -w wh3 --format csv "SELECT count(*) FROM d_silver"

# 9. Materialized views: recomputed whole by each run, after the streaming tables they read.
# (CAST: sum(BIGINT) is a HUGEINT in the engine today, which a Delta table cannot hold.)
cat > mv.sql <<'SQL'
CREATE OR REFRESH MATERIALIZED VIEW mv_totals AS
SELECT k, CAST(sum(v) AS BIGINT) AS total, count(*) AS n FROM LIVE.mv_bronze GROUP BY k;
CREATE OR REFRESH MATERIALIZED VIEW mv_keys AS SELECT count(*) AS keys FROM mv_totals;
CREATE OR REFRESH STREAMING TABLE mv_bronze TRIGGER AVAILABLE NOW AS
SELECT * FROM STREAM read_files('landing/', format => 'json', schema => 'k STRING, v BIGINT');
SQL
"${SLUICE}" run mv.sql -w wh4 > run9.log 2>&1 && pass || { fail "materialized view run"; cat run9.log; }
expect_order() {  # expect_order <log> <first line> <second line>
  local a b
  a="$(grep -n -F "$2" "$1" | head -1 | cut -d: -f1)"
  b="$(grep -n -F "$3" "$1" | head -1 | cut -d: -f1)"
  [[ -n "${a}" && -n "${b}" && ${a} -lt ${b} ]] && pass || { fail "order: '$2' before '$3'"; cat "$1"; }
}
expect_order run9.log "finished mv_bronze" "refreshed mv_totals (materialized view, full recompute)"
expect_order run9.log "refreshed mv_totals" "refreshed mv_keys"
check "view rows" 0 "a,4,2" -- "${SLUICE}" sql -w wh4 --format csv "SELECT * FROM mv_totals ORDER BY k"
printf '%s\n' '{"k":"c","v":5}' '{"k":"a","v":1}' > landing/2.json
"${SLUICE}" run mv.sql -w wh4 > run9b.log 2>&1 && pass || { fail "second run"; cat run9b.log; }
check "view recomputed" 0 "a,5,3" -- "${SLUICE}" sql -w wh4 --format csv "SELECT * FROM mv_totals ORDER BY k"
check "view of a view" 0 "3" -- "${SLUICE}" sql -w wh4 --format csv "SELECT keys FROM mv_keys"
# Over existing tables only: refreshed before any query starts.
printf '%s\n' "CREATE MATERIALIZED VIEW mv_n AS SELECT count(*) AS n FROM mv_bronze;" > mv2.sql
check "view over an existing table" 0 "refreshed mv_n (materialized view, full recompute)" -- \
  "${SLUICE}" run mv2.sql -w wh4
check "its rows" 0 "5" -- "${SLUICE}" sql -w wh4 --format csv "SELECT n FROM mv_n"
# A STREAM of a materialized view is refused before anything runs.
printf '%s\n' "CREATE MATERIALIZED VIEW m AS SELECT 1 AS x;" \
  "CREATE STREAMING TABLE s AS SELECT * FROM STREAM m;" > mv3.sql
check "stream of a view" 1 "mv3.sql:2: streaming table 's' reads materialized view 'm' (mv3.sql:1) as a STREAM" -- \
  "${SLUICE}" run mv3.sql -w wh5
check "stream of a view created nothing" 1 "" -- test -e wh5

# 10. --triggered: every query AVAILABLE NOW whatever its TRIGGER, views refreshed, then stop.
cat > trig.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE t_bronze AS
SELECT * FROM STREAM read_files('landing/', format => 'json', schema => 'k STRING, v BIGINT');
CREATE OR REFRESH MATERIALIZED VIEW t_count AS SELECT count(*) AS n FROM t_bronze;
SQL
check "view over a continuous table" 1 "trig.sql:3: materialized view 't_count' reads streaming table 't_bronze' (trig.sql:1), which runs until stopped" -- \
  "${SLUICE}" run trig.sql -w wh6
check "triggered run" 0 "refreshed t_count (materialized view, full recompute)" -- \
  "${SLUICE}" run trig.sql -w wh6 --triggered
check "triggered rows" 0 "5" -- "${SLUICE}" sql -w wh6 --format csv "SELECT n FROM t_count"

# 11. Views: not materialized, read where they are used; a streaming view feeds a streaming
# table, a batch view a materialized view; sluice sql does not see them.
cat > views.sql <<'SQL'
CREATE OR REFRESH MATERIALIZED VIEW v_keys AS SELECT count(*) AS n FROM LIVE.keys_seen;
CREATE TEMPORARY VIEW positive AS SELECT k, v FROM STREAM(LIVE.v_bronze) WHERE v > 0;
CREATE VIEW keys_seen AS SELECT DISTINCT k FROM LIVE.v_silver;
CREATE OR REFRESH STREAMING TABLE v_silver TRIGGER AVAILABLE NOW AS
SELECT k, v FROM STREAM(LIVE.positive);
CREATE OR REFRESH STREAMING TABLE v_bronze TRIGGER AVAILABLE NOW AS
SELECT * FROM STREAM read_files('landing/', format => 'json', schema => 'k STRING, v BIGINT');
SQL
check "views dry run" 0 "view positive (views.sql:2) reads v_bronze" -- "${SLUICE}" run views.sql -w wh7 --dry-run
check "views summary" 0 "valid: 2 streaming tables, 1 materialized view, 2 views, 0 flows, 0 sinks, 0 settings" -- \
  "${SLUICE}" run views.sql -w wh7 --dry-run
"${SLUICE}" run views.sql -w wh7 > run11.log 2>&1 && pass || { fail "views run"; cat run11.log; }
check "streaming view filtered" 0 "4" -- "${SLUICE}" sql -w wh7 --format csv "SELECT count(*) FROM v_silver"
check "view of a view" 0 "2" -- "${SLUICE}" sql -w wh7 --format csv "SELECT n FROM v_keys"
check "a view is not a table" 1 "keys_seen" -- "${SLUICE}" sql -w wh7 "SELECT * FROM keys_seen"
printf '%s\n' "CREATE VIEW dims AS SELECT 1 AS k;" \
  "CREATE STREAMING TABLE s AS SELECT * FROM STREAM dims;" > views2.sql
check "stream of a batch view" 1 "views2.sql:2: view 'dims' is read as a STREAM (at line 2, column 43), but its query reads no STREAM" -- \
  "${SLUICE}" run views2.sql -w wh8
check "nothing created" 1 "" -- test -e wh8

# A pipeline of only a table of declared columns (flows would fill it): each run makes or keeps
# it and says so, the second run as the first (it said "no streaming tables or flows").
printf '%s\n' "CREATE OR REFRESH STREAMING TABLE cols (a INT, b STRING);" > cols.sql
for run in 1 2; do
  check "columns-only table, run ${run}" 0 "cols: defined; no query or flow writes it in cols.sql, so nothing runs" -- \
    "${SLUICE}" run cols.sql -w wh9 --triggered
done
check "columns-only table made" 0 "a,int" -- "${SLUICE}" sql -w wh9 --format csv "SELECT col_name, data_type FROM (DESCRIBE cols) WHERE col_name = 'a'"

finish
