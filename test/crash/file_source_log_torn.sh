#!/usr/bin/env bash
# Crash test of the files-source log (issue 24): `sluice run` of a read_files pipeline is killed
# at the crash points around the write of sources/0/<N> (SLUICE_CRASH_AT=
# sources.before_file_log_write / sources.after_file_log_write) and at after_offsets_write, and
# after some kills the newest log entry is cut at a random byte (a torn write):
#   - cut after a kill at sources.after_file_log_write (no batch planned with the entry): the next
#     run must rebuild the entry and go on, every row once;
#   - cut after a kill at after_offsets_write (a batch was planned with it): the next run must
#     fail naming the entry, never re-read silently; the entry is then restored from a copy.
# At the end one clean run finishes and the table must hold every input row exactly once.
#
# Usage: file_source_log_torn.sh <sluice binary> [rounds (default 12)] [seed]
set -uo pipefail
SLUICE="$(realpath "$1")"
ROUNDS="${2:-12}"
SEED="${3:-$$}"
RANDOM="${SEED}"
echo "seed ${SEED} (rerun: $0 $1 ${ROUNDS} ${SEED})"
WORK="$(mktemp -d)"
trap 'rm -rf "${WORK}"' EXIT
cd "${WORK}"
mkdir -p landing staging

ROWS_PER_FILE=20
files=0
add_file() {
  local f=$((files++)) name
  name="$(printf 'part-%05d.json' "${f}")"
  for ((r = 0; r < ROWS_PER_FILE; r++)); do
    echo "{\"id\": $((f * ROWS_PER_FILE + r))}"
  done > "staging/${name}"
  mv "staging/${name}" "landing/${name}"
}

cat > pipeline.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE events TRIGGER AVAILABLE NOW AS
SELECT id FROM STREAM read_files('landing/', format => 'json', schema => 'id BIGINT',
                                 maxFilesPerTrigger => 1);
SQL

newest_entry() {  # the highest-numbered files-source log entry
  local dir
  dir="$(find wh -type d -path '*/sources/0' | head -n 1)"
  [[ -n "${dir}" ]] || return 1
  ls "${dir}" | grep -E '^(0|[1-9][0-9]*)$' | sort -n | tail -n 1 | sed "s|^|${dir}/|"
}

cut_entry() {  # cuts file $1 at a random byte before its end
  local size
  size="$(stat -c %s "$1")"
  truncate -s $((RANDOM % size)) "$1"
}

rebuilt=0
refused=0
crashes=0
for ((round = 0; round < ROUNDS; round++)); do
  add_file
  add_file
  case $((round % 3)) in
    0) point=sources.before_file_log_write ;;
    1) point=sources.after_file_log_write ;;
    2) point=after_offsets_write ;;
  esac
  SLUICE_CRASH_AT="${point}:2" "${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1
  code=$?
  if [[ ${code} -ne 137 ]]; then
    if [[ ${code} -ne 0 ]]; then echo "FAIL: round ${round} (${point}) exited ${code}:"; cat run.log; exit 1; fi
    continue  # fewer than 2 batches this round: nothing to crash
  fi
  crashes=$((crashes + 1))
  entry="$(newest_entry)" || { echo "FAIL: no files-source log after a crash"; exit 1; }
  if [[ ${point} == sources.after_file_log_write ]]; then
    cut_entry "${entry}"
    if ! "${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1; then
      echo "FAIL: round ${round}: a cut unplanned entry ${entry} was not rebuilt:"; cat run.log; exit 1
    fi
    rebuilt=$((rebuilt + 1))
  elif [[ ${point} == after_offsets_write ]]; then
    cp "${entry}" entry.copy
    cut_entry "${entry}"
    if "${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1; then
      echo "FAIL: round ${round}: a cut planned entry ${entry} was accepted:"; cat run.log; exit 1
    fi
    if ! grep -q "file source log .*sources/0/$(basename "${entry}"): " run.log; then
      echo "FAIL: round ${round}: the error does not name ${entry}:"; cat run.log; exit 1
    fi
    ((refused == 0)) && echo "refused as expected: $(grep -m 1 '^Error' run.log)"
    refused=$((refused + 1))
    cp entry.copy "${entry}"  # the operator restores the entry
  fi
done

if ! "${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1; then
  echo "FAIL: the final run failed:"; cat run.log; exit 1
fi
expected=$((files * ROWS_PER_FILE))
got="$("${SLUICE}" sql --warehouse wh --format csv \
  "SELECT count(*) || ',' || count(DISTINCT id) || ',' || min(id) || ',' || max(id) AS r FROM events" |
  tail -n 1 | tr -d '\r"')"
want="${expected},${expected},0,$((expected - 1))"
echo "files=${files} rows=${expected} crashes=${crashes} rebuilt=${rebuilt} refused=${refused} table=${got}"
if ((rebuilt == 0 || refused == 0)); then
  echo "FAIL: the rounds did not reach both cases (rebuilt ${rebuilt}, refused ${refused})"; exit 1
fi
if [[ "${got}" != "${want}" ]]; then
  echo "FAIL: table holds (count, distinct, min, max) = ${got}, want ${want}"; exit 1
fi
echo "PASS"
