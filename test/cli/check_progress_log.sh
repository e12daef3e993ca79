#!/usr/bin/env bash
# `sluice run --progress-log FILE`: every batch's progress JSON, one object per line, appended.
set -uo pipefail
SLUICE="$(realpath "$1")"
WORK="$(mktemp -d)"
trap 'rm -rf "${WORK}"' EXIT
cd "${WORK}"
fail() { echo "FAIL: $*"; exit 1; }
"${SLUICE}" sql --warehouse wh "CREATE TABLE src (id BIGINT); INSERT INTO src VALUES (1), (2); INSERT INTO src VALUES (3)" > /dev/null ||
  fail "setup"
cat > pipeline.sql <<'EOF'
CREATE OR REFRESH STREAMING TABLE copy TRIGGER AVAILABLE NOW AS
SELECT id FROM STREAM src WITH (maxFilesPerTrigger = 1);
EOF
"${SLUICE}" run pipeline.sql --warehouse wh --progress-log progress.jsonl > run.log 2>&1 ||
  { cat run.log; fail "sluice run failed"; }
lines=$(wc -l < progress.jsonl)
[[ ${lines} -ge 2 ]] || fail "expected a line per batch, got ${lines}: $(cat progress.jsonl)"
got="$("${SLUICE}" sql --warehouse wh --format csv \
  "SELECT count(*) || ',' || min(json->>'name') || ',' || sum((json->>'numInputRows')::INT) || ',' ||
          bool_and((json->'durationMs') IS NOT NULL AND (json->'sources') IS NOT NULL AND (json->'sink') IS NOT NULL)
   FROM read_json_objects('progress.jsonl') AS t(json)" | tail -n 1 | tr -d '\r"')"
[[ "${got}" == "${lines},copy,3,true" ]] || fail "progress log content: ${got}"
# Appends: a second run adds to the file.
"${SLUICE}" sql --warehouse wh "INSERT INTO src VALUES (4)" > /dev/null
"${SLUICE}" run pipeline.sql --warehouse wh --progress-log progress.jsonl > run.log 2>&1 ||
  { cat run.log; fail "second run failed"; }
[[ $(wc -l < progress.jsonl) -gt ${lines} ]] || fail "the second run did not append"
# An unwritable path is an error naming it.
if "${SLUICE}" run pipeline.sql --warehouse wh --progress-log /nonexistent/dir/p.jsonl > out.log 2>&1; then
  fail "an unwritable progress log was accepted"
fi
grep -q "cannot open the progress log /nonexistent/dir/p.jsonl" out.log || fail "error: $(cat out.log)"
echo PASS
