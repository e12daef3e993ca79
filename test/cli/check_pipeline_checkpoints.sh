#!/usr/bin/env bash
# `sluice check` (and `sluice run --dry-run`, and `sluice run` itself before it creates anything)
# catches what a changed pipeline would otherwise hit only when its queries start again
# (docs/pipelines.md "sluice check: before a change runs"): a changed grouping key, aggregate
# list, stateful operator, watermark column or source list against the existing checkpoint, an
# existing Delta table the new output does not fit, a missing input table, a refused construct,
# an unknown column. Each is printed with its file:line, the dataset and what to do; exit 1;
# nothing in the warehouse changes (not even the stored definition). An unchanged pipeline (also
# with a different shufflePartitions than its checkpoint's: the checkpoint's is used, as a
# restart uses it) checks clean and still runs. Usage errors exit 2.
# Usage: check_pipeline_checkpoints.sh <sluice binary>
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SLUICE="$(realpath "$1")"
enter_work_dir

"${SLUICE}" sql -w wh >/dev/null <<'SQL' || { echo "FAIL setup"; exit 1; }
CREATE TABLE src (k STRING, j STRING, v BIGINT, ts TIMESTAMP, ts2 TIMESTAMP);
CREATE TABLE src2 (k STRING, j STRING, v BIGINT, ts TIMESTAMP, ts2 TIMESTAMP);
INSERT INTO src VALUES ('a', 'x', 1, TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP '2024-01-01 00:00:00'),
                       ('b', 'y', 2, TIMESTAMP '2024-01-01 00:00:05', TIMESTAMP '2024-01-01 00:00:05');
SQL

# The pipeline as it first runs: an aggregation, a windowed aggregation with a watermark, a
# deduplication and a stateless table, with 2 state partitions.
cat > p.sql <<'SQL'
SET sluice.shufflePartitions = 2;
CREATE OR REFRESH STREAMING TABLE agg OUTPUT MODE COMPLETE AS
  SELECT k, count(*) AS n FROM STREAM src GROUP BY k;
CREATE OR REFRESH STREAMING TABLE win OUTPUT MODE APPEND AS
  SELECT window.start AS w, count(*) AS n
  FROM STREAM src WATERMARK ts DELAY OF INTERVAL 10 SECONDS AS e
  GROUP BY window(e.ts, '10 seconds');
CREATE OR REFRESH STREAMING TABLE dedup AS
  SELECT DISTINCT ON (k) k, v FROM STREAM src;
CREATE OR REFRESH STREAMING TABLE plain AS SELECT k, v FROM STREAM src;
SQL
check "a new pipeline checks" 0 "valid: 4 streaming tables" -- "${SLUICE}" check p.sql -w wh
"${SLUICE}" run p.sql -w wh --triggered > run1.log 2>&1 && pass || { fail "first run"; cat run1.log; }

snapshot() { find wh -type f | sort | xargs md5sum; }
snapshot > before.txt
unchanged() {  # unchanged <name>: every file of the warehouse as it was (definitions included)
  snapshot > after.txt
  diff before.txt after.txt > diff.txt && pass || { fail "$1: the warehouse changed"; cat diff.txt; }
}

# The same pipeline checks clean, also without its SET: the checkpoint's 2 partitions are used.
check "unchanged" 0 "valid: 4 streaming tables" -- "${SLUICE}" check p.sql -w wh
grep -v "shufflePartitions" p.sql > noset.sql
check "unchanged, another shufflePartitions" 0 "valid: 4 streaming tables" -- "${SLUICE}" check noset.sql -w wh
unchanged "clean checks"

# changed <name> <sed expression> <expected error>: the changed pipeline is refused by sluice
# check, sluice run --dry-run and sluice run, naming the dataset and what to do; nothing changes.
changed() {
  local name="$1" edit="$2" want="$3"
  sed -e "${edit}" p.sql > changed.sql
  cmp -s p.sql changed.sql && { fail "${name}: the edit changed nothing"; return; }
  check "${name}" 1 "${want}" -- "${SLUICE}" check changed.sql -w wh
  check "${name} (dry run)" 1 "${want}" -- "${SLUICE}" run changed.sql -w wh --dry-run
  check "${name} (run)" 1 "Error: the pipeline is not valid; nothing was created or run" -- \
    "${SLUICE}" run changed.sql -w wh --triggered
  unchanged "${name}"
}

cannot="the new definition cannot continue from its checkpoint"
changed "grouping key" 's/SELECT k, count(\*) AS n FROM STREAM src GROUP BY k/SELECT j AS k, count(*) AS n FROM STREAM src GROUP BY j/' \
  "Error: changed.sql:2: streaming table 'agg': ${cannot} wh/_checkpoints/agg"
check "grouping key: what changed" 1 "the state key changed (field 1 was \`k\` VARCHAR, now \`j\` VARCHAR) (STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE)" -- \
  "${SLUICE}" check changed.sql -w wh
check "grouping key: what to do" 1 "To run it: restore the previous definition, or start the table anew: DROP TABLE agg (sluice sql)" -- \
  "${SLUICE}" check changed.sql -w wh
changed "aggregate" 's/SELECT k, count(\*) AS n FROM STREAM src GROUP BY k/SELECT k, sum(v) AS n FROM STREAM src GROUP BY k/' \
  "the state value changed (field 2 was \`count(*)\` BIGINT, now \`sum(v)\` BIGINT) (STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE)"
changed "operator added" 's/SELECT k, count(\*) AS n FROM STREAM src GROUP BY k/SELECT k, count(*) AS n FROM (SELECT DISTINCT ON (v) * FROM STREAM src) AS d GROUP BY k/' \
  "stateful operator 1 ('dedupe') is new: the checkpoint wh/_checkpoints/agg has no state for it"
changed "operator replaced" 's/SELECT DISTINCT ON (k) k, v FROM STREAM src/SELECT k, max(v) AS v FROM STREAM src GROUP BY k/; s/STREAMING TABLE dedup AS/STREAMING TABLE dedup OUTPUT MODE UPDATE AS/' \
  "streaming table 'dedup': ${cannot} wh/_checkpoints/dedup: stateful operator 0 is 'stateStoreSave' in this query but 'dedupe' in the checkpoint"
changed "deduplication key" 's/SELECT DISTINCT ON (k) k, v/SELECT DISTINCT ON (v) k, v/' \
  "streaming table 'dedup': ${cannot} wh/_checkpoints/dedup"
changed "watermark column" 's/WATERMARK ts DELAY/WATERMARK ts2 DELAY/; s/window(e.ts,/window(e.ts2,/' \
  "streaming table 'win': ${cannot} wh/_checkpoints/win"
changed "another source" 's/SELECT k, v FROM STREAM src;/SELECT k, v FROM STREAM src2;/' \
  "streaming table 'plain': ${cannot} wh/_checkpoints/plain: streaming source 0 changed from 'DeltaSource["
changed "a source added" 's/SELECT k, v FROM STREAM src;/SELECT k, v FROM STREAM src UNION ALL SELECT k, v FROM STREAM src2;/' \
  "streaming table 'plain': ${cannot} wh/_checkpoints/plain: the number of streaming sources changed from 1 to 2"
changed "the table's schema" 's/SELECT k, v FROM STREAM src;/SELECT k, CAST(v AS STRING) AS v FROM STREAM src;/' \
  "streaming table 'plain': its query's output cannot be written to the table plain: "
changed "a missing input" 's/FROM STREAM src;/FROM STREAM nosuch;/' \
  "streaming table 'plain' reads 'nosuch', which is neither defined in the pipeline nor an existing table"
changed "a refused construct" 's/SELECT k, v FROM STREAM src;/SELECT k, v FROM STREAM src TRIGGER CONTINUOUS;/' \
  "Error: changed.sql:"
changed "an unknown column" 's/SELECT k, v FROM STREAM src;/SELECT k, nosuch FROM STREAM src;/' \
  "streaming table 'plain': Binder Error: Referenced column \"nosuch\" not found"

# Every problem of the pipeline is listed, one line each.
sed -e 's/GROUP BY k/GROUP BY j/; s/SELECT k, count/SELECT j AS k, count/' \
    -e 's/SELECT k, v FROM STREAM src;/SELECT k, v FROM STREAM src2;/' p.sql > two.sql
"${SLUICE}" check two.sql -w wh > two.log 2>&1
[[ $? -eq 1 && $(grep -c "${cannot}" two.log) -eq 2 ]] && pass || { fail "two problems"; cat two.log; }

# The original pipeline still checks and runs, continuing from its checkpoints.
"${SLUICE}" sql -w wh "INSERT INTO src VALUES ('a', 'z', 3, TIMESTAMP '2024-01-01 00:01:00', TIMESTAMP '2024-01-01 00:01:00')" > /dev/null
check "the original" 0 "valid: 4 streaming tables" -- "${SLUICE}" check p.sql -w wh
"${SLUICE}" run p.sql -w wh --triggered > run2.log 2>&1 && pass || { fail "second run"; cat run2.log; }
check "its rows" 0 "a,2" -- sql "SELECT k, n FROM agg ORDER BY k"

# Usage: no file, a file that does not exist (exit 2, with the usage line).
check "usage: no file" 2 "Usage:" -- "${SLUICE}" check -w wh
check "usage: no such file" 2 "nosuch.sql" -- "${SLUICE}" check nosuch.sql -w wh

finish
