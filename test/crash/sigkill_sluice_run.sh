#!/usr/bin/env bash
# Crash test of a real `sluice run` (issue 4, "Done when"): a pipeline streams JSON files into a
# Delta streaming table; the process is killed with SIGKILL at random moments KILLS times (and,
# every few rounds, at each named crash point through SLUICE_CRASH_AT), restarted each time while
# new files keep arriving. At the end one run finishes cleanly and the table must hold every
# input row exactly once.
#
# Usage: sigkill_sluice_run.sh <sluice binary> [kills (default 100)] [seed]
set -uo pipefail
SLUICE="$(realpath "$1")"
KILLS="${2:-100}"
RANDOM="${3:-$$}"
WORK="$(mktemp -d)"
trap 'rm -rf "${WORK}"' EXIT
cd "${WORK}"
mkdir -p landing staging

ROWS_PER_FILE=50
files=0
add_file() {  # writes one file atomically (rename into landing/), ids unique across files
  local f=$((files++)) name
  name="$(printf 'part-%05d.json' "${f}")"
  for ((r = 0; r < ROWS_PER_FILE; r++)); do
    echo "{\"id\": $((f * ROWS_PER_FILE + r)), \"payload\": \"file ${f} row ${r}\"}"
  done > "staging/${name}"
  mv "staging/${name}" "landing/${name}"
}

cat > pipeline.sql <<'EOF'
CREATE OR REFRESH STREAMING TABLE events TRIGGER AVAILABLE NOW AS
SELECT id, payload
FROM STREAM read_files('landing/', format => 'json', schema => 'id BIGINT, payload VARCHAR',
                       maxFilesPerTrigger => 1);
EOF

POINTS=(after_offsets_write after_state_commit after_sink_write after_commit_write)
killed=0
crashed_at_points=0
# Rounds go on until KILLS processes were really killed (a run may finish before its kill).
for ((round = 0; killed + crashed_at_points < KILLS && round < 4 * KILLS; round++)); do
  add_file
  add_file
  if ((round % 10 == 9)); then
    # A deterministic crash at a named point of the next batch.
    point="${POINTS[$(((round / 10) % 4))]}"
    SLUICE_CRASH_AT="${point}" "${SLUICE}" run pipeline.sql --warehouse wh > "run.log" 2>&1
    code=$?
    if [[ ${code} -ne 137 ]] && ! grep -q "crash point" run.log; then
      # Nothing to do this round (no batch reached the point) is fine; anything else is not.
      if [[ ${code} -ne 0 ]]; then
        echo "FAIL: run with SLUICE_CRASH_AT=${point} exited ${code}:"; cat run.log; exit 1
      fi
    else
      crashed_at_points=$((crashed_at_points + 1))
    fi
    continue
  fi
  "${SLUICE}" run pipeline.sql --warehouse wh > "run.log" 2>&1 &
  pid=$!
  # Kill after 0-250 ms: before, during or after a batch, a commit or the catalog write.
  sleep "0.$(printf '%03d' $((RANDOM % 250)))"
  if kill -9 "${pid}" 2> /dev/null; then killed=$((killed + 1)); fi
  wait "${pid}" 2> /dev/null
  code=$?
  if [[ ${code} -ne 0 && ${code} -ne 137 ]]; then
    echo "FAIL: round ${round}: sluice run exited ${code} (not a kill):"; cat run.log; exit 1
  fi
done

# A clean run processes everything that is left.
if ! "${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1; then
  echo "FAIL: the final run failed:"; cat run.log; exit 1
fi
expected=$((files * ROWS_PER_FILE))
got="$("${SLUICE}" sql --warehouse wh --format csv \
  "SELECT count(*) || ',' || count(DISTINCT id) || ',' || min(id) || ',' || max(id) AS r FROM events" |
  tail -n 1 | tr -d '\r"')"
want="${expected},${expected},0,$((expected - 1))"
echo "files=${files} rows=${expected} sigkills=${killed} crash_points=${crashed_at_points} table=${got}"
if ((killed + crashed_at_points < KILLS)); then
  echo "FAIL: only $((killed + crashed_at_points)) of ${KILLS} runs were killed"
  exit 1
fi
if [[ "${got}" != "${want}" ]]; then
  echo "FAIL: table holds (count, distinct, min, max) = ${got}, want ${want}"
  exit 1
fi
echo "PASS"
