#!/usr/bin/env bash
# End-to-end checks of `sluice sql` and `sluice --help` as a user runs them.
# Usage: check_sql_command.sh <sluice binary>
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SLUICE="$(realpath "$1")"
enter_work_dir

check "answer" 0 "42" -- "${SLUICE}" sql "SELECT 42 AS answer"
out="$("${SLUICE}" sql "SELECT 42 AS answer")"
[[ "${out}" == $'answer\n------\n    42\n(1 row)' ]] && pass || fail "table output: ${out}"
check "csv" 0 $'n,s\r\n1,x' -- "${SLUICE}" sql --format csv "SELECT 1 AS n, 'x' AS s"
check "json" 0 '{"n":1,"s":"x"}' -- "${SLUICE}" sql --format json "SELECT 1 AS n, 'x' AS s"
check "bad sql" 1 "Error: Parser Error: syntax error" -- "${SLUICE}" sql "SELEC 1"
check "missing table" 1 "Error: Catalog Error: Table with name nope does not exist" -- "${SLUICE}" sql "SELECT * FROM nope"
# One clear line: no caret diagram on stderr.
lines="$("${SLUICE}" sql "SELEC 1" 2>&1 | wc -l)"
[[ "${lines}" -eq 1 ]] && pass || fail "error is ${lines} lines"
check "script on stdin" 0 "3" -- bash -c "printf 'CREATE TABLE t AS SELECT 1 AS x;\nSELECT count(*) + 2 FROM t;\n' | '${SLUICE}' sql"
check "script error names line" 1 "Error (statement at line 2)" -- bash -c "printf 'SELECT 1;\nSELECT * FROM nope;\n' | '${SLUICE}' sql"
printf 'SELECT 5 AS five;\n' > script.sql
check "file" 0 "five" -- "${SLUICE}" sql -f script.sql
check "missing file" 1 "Error: cannot read" -- "${SLUICE}" sql -f nope.sql
check "warehouse created" 0 "" -- "${SLUICE}" sql --warehouse "${WORK}/wh" "SELECT 1"
check "a new warehouse is named on a missing table" 1 "Note: the warehouse ${WORK}/typo did not exist and was created empty by this command: is --warehouse right?" -- "${SLUICE}" sql --warehouse "${WORK}/typo" "SELECT * FROM orders"
check_not "an existing warehouse gets no note" "Note: the warehouse" -- "${SLUICE}" sql --warehouse "${WORK}/typo" "SELECT * FROM orders"
[[ -d "${WORK}/wh" ]] && pass || fail "warehouse dir not created"
check "help" 0 "Run SQL statements" -- "${SLUICE}" --help
check "sql help has an example" 0 'sluice sql "SELECT 42 AS answer"' -- "${SLUICE}" sql --help
check "test help has an example" 0 "sluice test test/sql" -- "${SLUICE}" test --help
check "no subcommand" 2 "A subcommand is required" -- "${SLUICE}"
check "bad format" 2 "format" -- "${SLUICE}" sql --format xml "SELECT 1"
check "unknown command named" 2 "Error: unknown command 'nosuch' (commands: " -- "${SLUICE}" nosuch
check "usage error shows the usage" 2 "Usage: sluice sql [OPTIONS]" -- "${SLUICE}" sql --bogus
check "usage error points at --help" 2 "Run 'sluice sql --help'" -- "${SLUICE}" sql --bogus
check "version" 0 "sluice " -- "${SLUICE}" --version
finish
