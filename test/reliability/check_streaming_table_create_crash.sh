#!/usr/bin/env bash
# A streaming table declared by its columns only is created by `sluice run` in two steps: its
# definition in the warehouse's catalog, then its Delta table. A process killed between them
# (finding 13 of docs/reliability.md: the crash points delta.before_commit / delta.after_commit
# of the table's first commit, the process exiting there) left, before the fix, a Delta table
# the catalog did not know, refused by every later run ("already exists and is not a streaming
# table"). Now the definition is recorded first and the next run completes the table: it exists
# with its columns, its flow fills it, nothing is doubled. A user's own table under that name is
# still refused (never adopted), and a CREATE that fails leaves no definition behind.
# Usage: check_streaming_table_create_crash.sh <sluice binary>
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
SLUICE="$(realpath "$1")"
enter_work_dir

cat > p.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE t (id BIGINT COMMENT 'the id', s STRING);
CREATE FLOW f AS INSERT INTO t BY NAME SELECT id, s FROM STREAM src;
SQL

# crashed_then_rerun <point>: the first run dies at the table's first commit; the next completes.
crashed_then_rerun() {
  local point="$1"
  rm -rf wh
  "${SLUICE}" sql -w wh "CREATE TABLE src (id BIGINT, s STRING); INSERT INTO src VALUES (1, 'a'), (2, 'b')" > /dev/null ||
    { fail "${point}: setup"; return; }
  SLUICE_CRASH_AT="${point}:1" "${SLUICE}" run p.sql -w wh --triggered > crash.log 2>&1
  local code=$?
  [[ ${code} -ne 0 ]] && grep -q "crash point ${point} reached" crash.log && pass ||
    { fail "${point}: the first run did not die there (exit ${code})"; cat crash.log; }
  check "${point}: the next run" 0 "finished f" -- "${SLUICE}" run p.sql -w wh --triggered
  check "${point}: its rows, once" 0 "1,a
2,b" -- sql "SELECT id, s FROM t ORDER BY id"
  check "${point}: its declared columns" 0 "id,bigint,the id" -- sql "DESCRIBE t"
  check "${point}: a streaming table" 0 "t" -- sql "SHOW STREAMING TABLES"
  check "${point}: a third run" 0 "finished f" -- "${SLUICE}" run p.sql -w wh --triggered
  check "${point}: still once" 0 "2" -- sql "SELECT count(*) FROM t"
}
crashed_then_rerun delta.after_commit
crashed_then_rerun delta.before_commit

# A table of the user's under that name is not adopted.
rm -rf wh
"${SLUICE}" sql -w wh "CREATE TABLE src (id BIGINT, s STRING); CREATE TABLE t (id BIGINT, s STRING)" > /dev/null
check "a user's table" 1 "table t already exists and is not a streaming table" -- \
  "${SLUICE}" run p.sql -w wh --triggered
[[ ! -e wh/_sluice/streaming_tables/t.json ]] && pass || fail "a user's table: a definition was recorded"

# A CREATE whose table cannot be made records nothing.
check "a table that cannot be made" 1 "CREATE STREAMING TABLE bad" -- \
  "${SLUICE}" sql -w wh "CREATE STREAMING TABLE bad (x HUGEINT)"
[[ ! -e wh/_sluice/streaming_tables/bad.json ]] && pass || fail "a failed CREATE left its definition"

finish
