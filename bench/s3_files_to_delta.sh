#!/usr/bin/env bash
# Files -> Delta throughput with the landing files and the warehouse on S3, side by side with the
# same job on the local disk (issue 20, docs/s3.md): a `sluice run --triggered` of one streaming
# table reading JSON files with read_files (maxFilesPerTrigger files per batch) into Delta.
# The same files, the same query; the local run and the S3 run alternate, REPEATS times each.
# Prints one line per run (rows, batches, seconds, rows/s) and the median rows/s of each with the
# ratio S3 / local. Checks that each run's table holds every row once (count = distinct ids).
#
# Run under moto (or any S3 whose endpoint is in AWS_ENDPOINT_URL_S3):
#   flock /tmp/sluice-peer.lock test/interop/s3/with_moto.sh bench/s3_files_to_delta.sh \
#     build/release/sluice [FILES] [ROWS_PER_FILE] [FILES_PER_TRIGGER] [REPEATS]
# Defaults: 40 files of 25,000 rows (1,000,000 rows, about 90 MB of JSON), 4 files per trigger,
# 3 repeats. Figures go in bench/RESULTS.md ("Files -> Delta on S3").
set -euo pipefail
SLUICE="$(realpath "$1")"
FILES="${2:-40}"
ROWS="${3:-25000}"
PER_TRIGGER="${4:-4}"
REPEATS="${5:-3}"
[[ -n "${AWS_ENDPOINT_URL_S3:-}" ]] || { echo "run me through test/interop/s3/with_moto.sh" >&2; exit 2; }
WORK="$(mktemp -d)"
trap 'rm -rf "${WORK}"' EXIT
cd "${WORK}"
BUCKET="files-bench-$$"
curl -sf -X PUT "${AWS_ENDPOINT_URL_S3}/${BUCKET}" > /dev/null

# The landing files, written once locally and copied to S3 (plain PUTs: moto takes them unsigned).
mkdir -p landing
for ((f = 0; f < FILES; f++)); do
  python3 -c "
import sys
f, n = int(sys.argv[1]), int(sys.argv[2])
out = sys.stdout
for i in range(n):
    k = f * n + i
    out.write('{\"id\": %d, \"user_id\": \"user-%d\", \"page\": \"p%d\", \"amount\": %d.%02d, \"ts\": \"2026-01-01 00:%02d:%02d\"}\n'
              % (k, k % 1000, k % 7, k % 90 + 10, k % 100, k // 60 % 60, k % 60))
" "${f}" "${ROWS}" > "landing/events-$(printf %04d "${f}").json"
  curl -sf -T "landing/events-$(printf %04d "${f}").json" \
    "${AWS_ENDPOINT_URL_S3}/${BUCKET}/landing/events-$(printf %04d "${f}").json" > /dev/null
done
TOTAL=$((FILES * ROWS))
echo "files ${FILES} x ${ROWS} rows = ${TOTAL} rows ($(du -sh landing | cut -f1)), ${PER_TRIGGER} files per trigger"

pipeline() {  # pipeline LANDING: the job's SQL
  cat << SQL
CREATE OR REFRESH STREAMING TABLE events TRIGGER AVAILABLE NOW AS
SELECT id, user_id, page, amount, ts
FROM STREAM read_files('$1', format => 'json',
                       schema => 'id BIGINT, user_id VARCHAR, page VARCHAR, amount DOUBLE, ts TIMESTAMP',
                       maxFilesPerTrigger => ${PER_TRIGGER});
SQL
}
run_once() {  # run_once local|s3 N: prints "rows/s" of the run after its line
  local where="$1" n="$2" wh landing start end secs counted
  if [[ "${where}" == s3 ]]; then
    wh="s3://${BUCKET}/wh-${n}"
    landing="s3://${BUCKET}/landing"
  else
    wh="${WORK}/wh-${n}"
    landing="${WORK}/landing"
  fi
  pipeline "${landing}" > "p-${where}-${n}.sql"
  start=$(date +%s.%N)
  SLUICE_LOCAL_CACHE_DIR="${WORK}/cache-${where}-${n}" \
    "${SLUICE}" run "p-${where}-${n}.sql" --warehouse "${wh}" --triggered > "run-${where}-${n}.log" 2>&1 ||
    { cat "run-${where}-${n}.log" >&2; exit 1; }
  end=$(date +%s.%N)
  counted="$(SLUICE_LOCAL_CACHE_DIR="${WORK}/cache-q" "${SLUICE}" sql --warehouse "${wh}" --format csv \
    "SELECT count(*) || ',' || count(DISTINCT id) FROM events" | tail -n 1 | tr -d '\r"')"
  [[ "${counted}" == "${TOTAL},${TOTAL}" ]] ||
    { echo "${where} run ${n}: the table holds ${counted} (count,distinct), want ${TOTAL},${TOTAL}" >&2; exit 1; }
  secs="$(python3 -c "print('%.2f' % (${end} - ${start}))")"
  echo "${where} run ${n}: ${TOTAL} rows, $(grep -c ' batch ' "run-${where}-${n}.log") batches, ${secs} s, $(python3 -c "print(int(${TOTAL} / (${end} - ${start})))") rows/s" >&2
  python3 -c "print(${TOTAL} / (${end} - ${start}))"
}
local_rates=()
s3_rates=()
for ((r = 0; r < REPEATS; r++)); do
  local_rates+=("$(run_once local "${r}")")
  s3_rates+=("$(run_once s3 "${r}")")
done
python3 - "${#local_rates[@]}" "${local_rates[@]}" "${s3_rates[@]}" << 'PY'
import statistics, sys
n = int(sys.argv[1]); v = [float(x) for x in sys.argv[2:]]
local, s3 = statistics.median(v[:n]), statistics.median(v[n:])
print("median rows/s: local %d, s3 %d; s3 / local = %.2f" % (local, s3, s3 / local))
PY
