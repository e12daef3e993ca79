#!/usr/bin/env bash
# Crash test of the offset log (issue 24): `sluice run` of a Nexmark pipeline (its offset is a bare
# number, the next event index) is killed at after_offsets_write or after_sink_write, and the
# newest offsets/<N> is then cut inside its last line, the number: "3000\n" becomes "300" or "30"
# (or loses only its line break). Such a cut parses as a valid, smaller offset; the next run must
# refuse it naming the file and the line (docs/formats/checkpoint.md, "Torn entries"), never
# re-run the batch with another end. The entry is then restored from a copy (the repair of
# docs/operations.md, "Damaged checkpoints and logs") and the run goes on. At the end the table
# must hold exactly the rows of an undisturbed run of the same pipeline (the oracle).
#
# Usage: offset_log_torn.sh <sluice binary> [rounds (default 6)] [seed]
set -uo pipefail
SLUICE="$(realpath "$1")"
ROUNDS="${2:-6}"
SEED="${3:-$$}"
RANDOM="${SEED}"
echo "seed ${SEED} (rerun: $0 $1 ${ROUNDS} ${SEED})"
WORK="$(mktemp -d)"
trap 'rm -rf "${WORK}"' EXIT
cd "${WORK}"

cat > pipeline.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE people TRIGGER AVAILABLE NOW AS
SELECT id, name FROM STREAM nexmark(kind => 'person', numEvents => 30000,
                                    maxEventsPerTrigger => 1000);
SQL

ids() {  # the table's rows of warehouse $1, one "id,name" a line, sorted
  "${SLUICE}" sql --warehouse "$1" --format csv "SELECT id || ',' || name AS r FROM people ORDER BY id" |
    tail -n +2 | tr -d '\r"'
}

# The oracle: the same pipeline, undisturbed.
if ! "${SLUICE}" run pipeline.sql --warehouse oracle > run.log 2>&1; then
  echo "FAIL: the undisturbed run failed:"; cat run.log; exit 1
fi
ids oracle > oracle.txt
[[ -s oracle.txt ]] || { echo "FAIL: the undisturbed run wrote no rows"; exit 1; }

OFFSETS=wh/_checkpoints/people/offsets
refused=0
for ((round = 0; round < ROUNDS; round++)); do
  case $((round % 2)) in
    0) point=after_offsets_write ;;
    1) point=after_sink_write ;;
  esac
  SLUICE_CRASH_AT="${point}:2" "${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1
  code=$?
  if [[ ${code} -ne 137 ]]; then
    echo "FAIL: round ${round}: no crash at ${point} (exit ${code}):"; cat run.log; exit 1
  fi
  n="$(ls "${OFFSETS}" | grep -E '^(0|[1-9][0-9]*)$' | sort -n | tail -n 1)"
  entry="${OFFSETS}/${n}"
  last="$(tail -n 1 "${entry}")"
  if [[ ! "${last}" =~ ^[0-9]+$ || "$(tail -c 1 "${entry}" | od -An -c | tr -d ' ')" != '\n' ]]; then
    echo "FAIL: round ${round}: ${entry} does not end with a number and a line break:"
    cat "${entry}"; exit 1
  fi
  cp "${entry}" entry.copy
  # Cut the final line break and 0 .. len-1 digits: what is left is a valid, smaller number.
  drop=$((1 + RANDOM % ${#last}))
  truncate -s $(($(stat -c %s "${entry}") - drop)) "${entry}"
  cut_to="$(tail -n 1 "${entry}")"
  if "${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1; then
    echo "FAIL: round ${round}: ${entry} cut from ${last} to ${cut_to} was accepted:"; cat run.log; exit 1
  fi
  line="$(wc -l < entry.copy)"
  if ! grep -q "offset log file .*${entry}: torn entry: its last line (line ${line}, '${cut_to}')" run.log; then
    echo "FAIL: round ${round}: the error does not name ${entry} and line ${line}:"; cat run.log; exit 1
  fi
  ((refused == 0)) && echo "refused as expected: $(grep -m 1 -o 'offset log file.*' run.log | cut -c 1-220)"
  refused=$((refused + 1))
  echo "round ${round}: killed at ${point}, ${entry} cut from ${last} to ${cut_to}: refused, restored"
  cp entry.copy "${entry}"  # the repair: the entry restored from a copy
done

if ! "${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1; then
  echo "FAIL: the final run failed:"; cat run.log; exit 1
fi
ids wh > got.txt
echo "rounds=${ROUNDS} refused=${refused} oracle_rows=$(wc -l < oracle.txt) rows=$(wc -l < got.txt)" \
  "distinct=$(sort -u got.txt | wc -l)"
if ! cmp -s oracle.txt got.txt; then
  echo "FAIL: the table differs from the undisturbed run (< oracle, > table):"
  diff oracle.txt got.txt | head -20
  exit 1
fi
echo "PASS"
