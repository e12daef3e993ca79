#!/usr/bin/env bash
# `sluice run --ui`: a real run of a stateful pipeline with the monitoring server on a free port.
# /metrics must parse as Prometheus text format 0.0.4 (prom_text.py) and its numbers must equal
# the progress JSON of /api/v1/queries/<id>/progress (check_metrics.py); /healthz is 200 "ok";
# the checker itself must reject malformed text; a busy port and a bad address are errors.
# Usage: check_metrics.sh SLUICE
set -uo pipefail
SLUICE="$(realpath "$1")"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="$(mktemp -d)"
PID=""
cleanup() {
  [[ -n "${PID}" ]] && kill "${PID}" 2>/dev/null && wait "${PID}" 2>/dev/null
  rm -rf "${WORK}"
}
trap cleanup EXIT
cd "${WORK}"
fail() {
  echo "FAIL: $*"
  [[ -f run.log ]] && { echo "--- sluice run output:"; tail -n 30 run.log; }
  exit 1
}
command -v curl > /dev/null || fail "curl is needed (Debian package curl)"

# The checker must fail on bad text (so that its PASS means something).
bad_cases=(
  'no_newline 1'
  $'x{a="1"} 1\nx{a="1"} 2\n'
  $'x{a="\\q"} 1\n'
  $'# TYPE x gauge\n# TYPE x gauge\nx 1\n'
  $'# TYPE x bogus\nx 1\n'
  $'x 1\ny 2\nx 3\n'
  $'x one\n'
  $'9x 1\n'
)
for text in "${bad_cases[@]}"; do
  printf '%s' "${text}" > bad.txt
  if python3 "${HERE}/prom_text.py" bad.txt > /dev/null; then
    fail "prom_text.py accepted malformed text: $(cat bad.txt)"
  fi
done
printf '# HELP x a \\\\ help\n# TYPE x counter\nx{a="q\\"\\n"} 1.5e3 1700000000\ny NaN\n' > good.txt
python3 "${HERE}/prom_text.py" good.txt > /dev/null || fail "prom_text.py rejected valid text"

cat > pipeline.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE counts TRIGGER PROCESSING TIME '300 milliseconds' AS
SELECT window(timestamp, '2 seconds') AS w, count(*) AS n
FROM STREAM read_rate(rowsPerSecond => 500) WATERMARK timestamp DELAY OF INTERVAL 1 SECOND AS r
GROUP BY window(timestamp, '2 seconds');
SQL
"${SLUICE}" run pipeline.sql --warehouse wh --ui 127.0.0.1:0 > run.log 2>&1 &
PID=$!
URL=""
for _ in $(seq 100); do
  URL="$(grep -o 'monitoring UI at http://127.0.0.1:[0-9]*/' run.log | sed 's/monitoring UI at //')"
  [[ -n "${URL}" ]] && break
  kill -0 "${PID}" 2>/dev/null || fail "sluice run ended before serving"
  sleep 0.1
done
[[ -n "${URL}" ]] || fail "no 'monitoring UI at' line"
URL="${URL%/}"
echo "server at ${URL}"

# Wait for a few batches with input.
for _ in $(seq 150); do
  n="$(curl -sf "${URL}/api/v1/queries" | python3 -c \
    'import json,sys; q=json.load(sys.stdin); print(q[0]["numInputRowsTotal"] if q and q[0]["lastBatchId"] is not None and q[0]["lastBatchId"] >= 4 else 0)' 2>/dev/null)"
  [[ "${n:-0}" -gt 0 ]] && break
  sleep 0.2
done
[[ "${n:-0}" -gt 0 ]] || fail "no batch with input after 30 s: $(curl -s "${URL}/api/v1/queries")"

curl -sf -D headers.txt "${URL}/metrics" -o metrics.txt || fail "GET /metrics failed"
grep -qi '^content-type: text/plain; version=0.0.4' headers.txt || fail "content type: $(cat headers.txt)"
python3 "${HERE}/prom_text.py" metrics.txt || fail "/metrics does not parse"
python3 "${HERE}/check_metrics.py" metrics.txt "${URL}" || fail "/metrics does not match the progress"
for m in sluice_state_rows sluice_query_watermark_lag_seconds sluice_query_input_rows_per_second; do
  grep -q "^${m}{" metrics.txt || fail "no ${m} sample in: $(cat metrics.txt)"
done
[[ "$(curl -s "${URL}/healthz")" == "ok" ]] || fail "healthz: $(curl -s "${URL}/healthz")"
curl -sf "${URL}/" -o page.html || fail "GET / failed"
grep -q 'data-chart' page.html || fail "the page has no charts"

# A busy port is an error naming it, before any query starts.
PORT="${URL##*:}"
if "${SLUICE}" run pipeline.sql --warehouse wh2 --ui "127.0.0.1:${PORT}" > busy.log 2>&1; then
  fail "a second server on port ${PORT} was accepted"
fi
grep -q "cannot listen on 127.0.0.1:${PORT}" busy.log || fail "busy port error: $(cat busy.log)"
if "${SLUICE}" run pipeline.sql --warehouse wh3 --ui nonsense > bad.log 2>&1; then
  fail "--ui nonsense was accepted"
fi
grep -q "the port must be a number" bad.log || fail "bad address error: $(cat bad.log)"

# Ctrl-C stops the run cleanly.
kill -INT "${PID}"
wait "${PID}"
rc=$?
PID=""
[[ ${rc} -eq 0 ]] || fail "sluice run exited with ${rc} after SIGINT"

# A failed run that the supervisor restarts: counted in failures, error kept, healthy again.
cat > plain.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE plain TRIGGER PROCESSING TIME '200 milliseconds' AS
SELECT value FROM STREAM read_rate(rowsPerSecond => 100);
SQL
SLUICE_TEST_FAIL_AT=after_sink_write:1 "${SLUICE}" run plain.sql --warehouse wh4 --ui 127.0.0.1:0 \
  --max-restarts 3 --restart-backoff 1s > run.log 2>&1 &
PID=$!
URL=""
for _ in $(seq 100); do
  URL="$(grep -o 'monitoring UI at http://127.0.0.1:[0-9]*/' run.log | sed 's/monitoring UI at //')"
  [[ -n "${URL}" ]] && break
  sleep 0.1
done
[[ -n "${URL}" ]] || fail "no 'monitoring UI at' line (restart case)"
URL="${URL%/}"
state=""
for _ in $(seq 150); do
  state="$(curl -sf "${URL}/api/v1/queries" | python3 -c \
    'import json,sys; q=json.load(sys.stdin)[0]; print(q["status"], q["failures"], (q["lastBatchId"] or 0) >= 1, q["error"] is not None and "injected failure" in q["error"]["message"])' 2>/dev/null)"
  [[ "${state}" == "active 1 True True" ]] && break
  sleep 0.2
done
[[ "${state}" == "active 1 True True" ]] || fail "after a restart: status failures batch error = '${state}'"
curl -sf "${URL}/metrics" -o metrics2.txt || fail "GET /metrics (restart case)"
grep -q '^sluice_query_failures_total{query_name="plain",query_id="[^"]*"} 1$' metrics2.txt ||
  fail "failures_total after one failure: $(grep failures_total metrics2.txt)"
grep -q '^sluice_query_status{query_name="plain",query_id="[^"]*",status="active"} 1$' metrics2.txt ||
  fail "status after the restart: $(grep sluice_query_status metrics2.txt)"
[[ "$(curl -s "${URL}/healthz")" == "ok" ]] || fail "healthz after the restart: $(curl -s "${URL}/healthz")"
kill -INT "${PID}"
wait "${PID}"
PID=""
echo PASS
