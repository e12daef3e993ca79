#!/usr/bin/env bash
# Crash test of stateful recovery (issue 5): a dedup-within-watermark streaming table over JSON
# files (every file repeats the previous file's ids) is run by a real `sluice run`, SIGKILLed at
# random moments, and every 10th round stopped at one of the four crash points instead
# (SLUICE_CRASH_AT); each run restarts on the same checkpoint. The dedup state lives in the
# operator's in-memory mirror with the stores detached (docs/state.md), so recovery rebuilds it
# from snapshots + changelogs. At the end the table must hold every id exactly once.
# Usage: sigkill_dedup_run.sh SLUICE [KILLS (default 60)] [SEED]
set -uo pipefail
SLUICE="$(realpath "$1")"
KILLS="${2:-60}"
RANDOM="${3:-$$}"
WORK="$(mktemp -d)"
trap 'rm -rf "${WORK}"' EXIT
cd "${WORK}"
mkdir -p landing staging
N=200   # new ids per file; each file also repeats the previous file's ids
files=0
add_file() {
  local f=$((files++)) name
  name="$(printf 'part-%05d.json' "${f}")"
  {
    for ((r = 0; r < N; r++)); do
      echo "{\"id\": $((f * N + r)), \"ts\": \"2026-01-01 00:$(printf '%02d' $(((f / 60) % 60))):$(printf '%02d' $((f % 60)))\"}"
      if ((f > 0)); then echo "{\"id\": $(((f - 1) * N + r)), \"ts\": \"2026-01-01 00:$(printf '%02d' $(((f / 60) % 60))):$(printf '%02d' $((f % 60)))\"}"; fi
    done
  } > "staging/${name}"
  mv "staging/${name}" "landing/${name}"
}
cat > pipeline.sql <<'EOF'
CREATE OR REFRESH STREAMING TABLE events TRIGGER AVAILABLE NOW AS
SELECT id, ts FROM STREAM read_files('landing/', format => 'json', schema => 'id BIGINT, ts TIMESTAMP', maxFilesPerTrigger => 1) WATERMARK ts DELAY OF INTERVAL 20 SECONDS AS e
QUALIFY row_number() OVER (PARTITION BY id ORDER BY ts) = 1;
EOF
POINTS=(after_offsets_write after_state_commit after_sink_write after_commit_write)
killed=0; points=0
for ((round = 0; killed + points < KILLS && round < 4 * KILLS; round++)); do
  add_file; add_file; add_file
  if ((round % 10 == 9)); then
    point="${POINTS[$(((round / 10) % 4))]}"
    SLUICE_CRASH_AT="${point}" "${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1
    code=$?
    if [[ ${code} -ne 137 ]] && ! grep -q "crash point" run.log; then
      if [[ ${code} -ne 0 ]]; then echo "FAIL at ${point}: ${code}"; cat run.log; exit 1; fi
    else points=$((points + 1)); fi
    continue
  fi
  "${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1 &
  pid=$!
  sleep "0.$(printf '%03d' $((RANDOM % 400)))"
  if kill -9 "${pid}" 2> /dev/null; then killed=$((killed + 1)); fi
  wait "${pid}" 2> /dev/null
  code=$?
  if [[ ${code} -ne 0 && ${code} -ne 137 ]]; then echo "FAIL round ${round}: ${code}"; cat run.log; exit 1; fi
done
if ! "${SLUICE}" run pipeline.sql --warehouse wh > run.log 2>&1; then echo "FAIL final"; cat run.log; exit 1; fi
expected=$((files * N))
got="$("${SLUICE}" sql --warehouse wh --format csv \
  "SELECT count(*) || ',' || count(DISTINCT id) || ',' || min(id) || ',' || max(id) AS r FROM events" |
  tail -n 1 | tr -d '\r"')"
want="${expected},${expected},0,$((expected - 1))"
snaps=$(find wh -name '*.snapshot' | wc -l)
echo "files=${files} sigkills=${killed} crash_points=${points} table=${got} want=${want} snapshots_in_checkpoint=${snaps}"
[[ "${got}" == "${want}" ]] && echo PASS || { echo FAIL; exit 1; }
