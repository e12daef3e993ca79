#!/usr/bin/env bash
# Killed stateful runs leave nothing behind (issue 24 #6). A windowed aggregation and a dedup
# within watermark (RocksDB state stores) over JSON files are run by `sluice run` with TMPDIR
# pointing at an empty directory, SIGKILLed while they work (KILLS times), then run to the end.
# Planted temporary files (".<name>.<random>.tmp", as a killed write leaves them) in offsets/
# and state/ stand for torn writes. Afterwards:
#   - TMPDIR holds no state working directory (they live under <checkpoint>/_work/);
#   - <checkpoint>/_work/ is empty (the lock's next owner removed the killed runs' ones, and a
#     run that ends removes its own);
#   - no temporary file is left in the checkpoints;
#   - the tables hold the right rows (nothing lost or doubled by the kills).
#
# Usage: check_killed_state_dirs.sh <sluice> [KILLS (default 4)]
set -uo pipefail
SLUICE="$(realpath "$1")"
KILLS="${2:-4}"
WORK="$(mktemp -d)"
trap 'rm -rf "${WORK}"' EXIT
cd "${WORK}"
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p landing staging tmp
export TMPDIR="${WORK}/tmp"
N=50
FILES=40
for ((f = 0; f < FILES; f++)); do
  name="$(printf 'part-%05d.json' "${f}")"
  for ((r = 0; r < N; r++)); do
    # ids repeat across consecutive files (the dedup drops them); one event per second
    echo "{\"id\": $((f * N / 2 + r)), \"ts\": \"2026-01-01 00:$(printf '%02d' $((f / 60))):$(printf '%02d' $((f % 60)))\"}"
  done > "staging/${name}"
  mv "staging/${name}" "landing/${name}"
done
cat > pipeline.sql <<'SQL'
CREATE OR REFRESH STREAMING TABLE counts TRIGGER AVAILABLE NOW AS
SELECT window.start AS w, count(*) AS n
FROM STREAM read_files('landing/', format => 'json', schema => 'id BIGINT, ts TIMESTAMP',
                       maxFilesPerTrigger => 1) WATERMARK ts DELAY OF INTERVAL 5 SECONDS AS e
GROUP BY window(ts, '10 seconds');
CREATE OR REFRESH STREAMING TABLE ids TRIGGER AVAILABLE NOW AS
SELECT id, ts FROM STREAM read_files('landing/', format => 'json', schema => 'id BIGINT, ts TIMESTAMP',
                                     maxFilesPerTrigger => 1) WATERMARK ts DELAY OF INTERVAL 30 SECONDS AS e
QUALIFY row_number() OVER (PARTITION BY id ORDER BY ts) = 1;
SQL
killed=0
for ((round = 0; killed < KILLS && round < 10 * KILLS; round++)); do
  "${SLUICE}" run pipeline.sql --warehouse wh > "run${round}.log" 2>&1 &
  pid=$!
  # Kill once a state working directory exists (the operators are open and working).
  for ((i = 0; i < 200; i++)); do
    [[ -n "$(find tmp wh/_checkpoints -maxdepth 3 -name '*-state-*' 2> /dev/null | head -1)" ]] && break
    kill -0 "${pid}" 2> /dev/null || break
    sleep 0.05
  done
  sleep "0.$(printf '%03d' $((RANDOM % 300)))"
  if kill -9 "${pid}" 2> /dev/null; then killed=$((killed + 1)); fi
  wait "${pid}" 2> /dev/null
  if ((round == 0)); then
    # Torn writes of a killed run, planted where the loop and the state store write.
    for cp in wh/_checkpoints/counts wh/_checkpoints/ids; do
      mkdir -p "${cp}/offsets" "${cp}/state/0/0"
      echo torn > "${cp}/offsets/.99.0123456789abcdef.tmp"
      echo torn > "${cp}/state/0/0/.99.delta.0123456789abcdef.tmp"
    done
  fi
done
((killed > 0)) || fail "no run could be killed while working"
# A run killed in its schema check leaves that check's scratch directory,
# sluice-check-<pid>-*, which the next check removes (fs/scratch_dir.h; the final run below
# must leave TMPDIR empty); nothing else may be left.
left_tmp=$(find tmp -mindepth 1 -maxdepth 1 ! -name 'sluice-check-*' | wc -l)
"${SLUICE}" run pipeline.sql --warehouse wh > final.log 2>&1 || { cat final.log; fail "the final run failed"; }
[[ ${left_tmp} -eq 0 ]] || fail "${left_tmp} entries in TMPDIR after ${killed} kills: $(ls tmp | head -3)"
[[ $(find tmp -mindepth 1 | wc -l) -eq 0 ]] || fail "the final run left entries in TMPDIR"
work_left=$(find wh/_checkpoints -path '*/_work/*' | wc -l)
[[ ${work_left} -eq 0 ]] || fail "${work_left} entries left under _work: $(find wh/_checkpoints -path '*/_work/*' | head -3)"
temps=$(find wh/_checkpoints -name '.*.tmp' | wc -l)
[[ ${temps} -eq 0 ]] || fail "${temps} temporary files left: $(find wh/_checkpoints -name '.*.tmp' | head -3)"
got=$("${SLUICE}" sql --warehouse wh --format csv "SELECT (SELECT sum(n) FROM counts) || ',' || (SELECT count(*) || '/' || count(DISTINCT id) FROM ids) AS r" | tail -n 1 | tr -d '\r"')
distinct=$(((FILES - 1) * N / 2 + N))
# Append mode emits a 10 s window once the watermark (latest second - 5 s) reaches its end: the
# windows ending by second FILES - 1 - 5, each 10 files of N rows.
want_counts=$((((FILES - 1 - 5) / 10) * 10 * N))
want="${want_counts},${distinct}/${distinct}"
[[ "${got}" == "${want}" ]] || fail "got ${got}, want ${want} (window counts, ids/distinct ids)"
echo "PASS (kills=${killed}, rows=${got})"
