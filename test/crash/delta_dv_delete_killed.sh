#!/usr/bin/env bash
# Crash test of a DELETE that writes deletion vectors (issue 19): `sluice sql` runs a DELETE on a
# table with delta.enableDeletionVectors (whose file already has a DV) and is killed (SLUICE_CRASH_AT,
# exit 137) at each step of its commit: after the DV file is written, before the commit is
# published, after it is published. After each kill the table must read exactly the rows before
# the DELETE (killed before the publish) or after it (killed after), never a mix; the DELETE is
# then run again and the table must hold exactly the expected rows; VACUUM then removes the DV
# file a killed run left unreferenced and keeps the live one.
#
# Usage: delta_dv_delete_killed.sh <sluice binary>
set -uo pipefail
SLUICE="$(realpath "$1")"
WORK="$(mktemp -d)"
trap 'rm -rf "${WORK}"' EXIT
cd "${WORK}"

sql() {  # warehouse, statements
  "${SLUICE}" sql --warehouse "$1" --format csv "$2"
}
state() {  # "count,sum" of the table of warehouse $1
  sql "$1" "SELECT count(*) || ',' || sum(id) AS r FROM t" | tail -n 1 | tr -d '\r"'
}
live_dv_files() {  # DV files named by the latest snapshot's adds (via the log replay of the reader)
  ls "$1"/t/deletion_vector_*.bin 2>/dev/null | wc -l
}

if ! sql base "CREATE TABLE t (id BIGINT, s VARCHAR)
      TBLPROPERTIES ('delta.enableDeletionVectors' = 'true');
    INSERT INTO t SELECT range AS id, 's' || range AS s FROM range(0, 5000);
    DELETE FROM t WHERE id % 10 = 0" > setup.log 2>&1; then
  echo "FAIL: setup:"; cat setup.log; exit 1
fi
if ! grep -q '"deletionVector"' base/t/_delta_log/00000000000000000002.json; then
  echo "FAIL: the setup DELETE wrote no deletion vector:"; cat base/t/_delta_log/00000000000000000002.json
  exit 1
fi
before="$(state base)"
# ids not divisible by 10, and then not by 3 either.
want_after="$(python3 -c "ids=[i for i in range(5000) if i % 10 and i % 3]; print(f'{len(ids)},{sum(ids)}')")"
[[ "${before}" == "4500,$(python3 -c "print(sum(i for i in range(5000) if i % 10))")" ]] || {
  echo "FAIL: unexpected state before the DELETE: ${before}"; exit 1; }

for point in delta.after_deletion_vector_write delta.before_commit delta.after_commit; do
  rm -rf wh && cp -r base wh
  SLUICE_CRASH_AT="${point}" "${SLUICE}" sql --warehouse wh "DELETE FROM t WHERE id % 3 = 0" \
    > run.log 2>&1
  code=$?
  if [[ ${code} -ne 137 ]] || ! grep -q "crash point ${point} reached" run.log; then
    echo "FAIL: no crash at ${point} (exit ${code}):"; cat run.log; exit 1
  fi
  got="$(state wh)"
  if [[ "${point}" == delta.after_commit ]]; then want="${want_after}"; else want="${before}"; fi
  if [[ "${got}" != "${want}" ]]; then
    echo "FAIL: killed at ${point}: the table reads ${got}, expected ${want}"; exit 1
  fi
  echo "killed at ${point}: the table reads ${got} (count,sum) as expected"
  if [[ "${point}" != delta.after_commit ]]; then
    if ! sql wh "DELETE FROM t WHERE id % 3 = 0" > rerun.log 2>&1; then
      echo "FAIL: the DELETE after the kill at ${point} failed:"; cat rerun.log; exit 1
    fi
  fi
  got="$(state wh)"
  if [[ "${got}" != "${want_after}" ]]; then
    echo "FAIL: after the kill at ${point} and a rerun the table reads ${got}, expected ${want_after}"
    exit 1
  fi
  # A second run of the same DELETE matches nothing and commits nothing.
  v_before="$(ls wh/t/_delta_log/*.json | wc -l)"
  sql wh "DELETE FROM t WHERE id % 3 = 0" > /dev/null 2>&1
  [[ "$(ls wh/t/_delta_log/*.json | wc -l)" == "${v_before}" ]] || {
    echo "FAIL: a DELETE matching nothing committed after ${point}"; exit 1; }
  # VACUUM with no retention: the DV files nothing references any more go, the live one stays.
  if ! sql wh "SET sluice.delta.retentionDurationCheck = false; VACUUM t RETAIN 0 HOURS" \
      > vacuum.log 2>&1; then
    echo "FAIL: VACUUM after ${point}:"; cat vacuum.log; exit 1
  fi
  n="$(live_dv_files wh)"
  if [[ "${n}" != 1 ]]; then
    echo "FAIL: after VACUUM (${point}) ${n} DV files are left, expected the live one"; ls wh/t; exit 1
  fi
  got="$(state wh)"
  [[ "${got}" == "${want_after}" ]] || { echo "FAIL: VACUUM changed the rows: ${got}"; exit 1; }
done
echo "PASS: a DELETE with deletion vectors killed at each commit step leaves an exact table"
