#!/usr/bin/env bash
# End-to-end checks of `sluice checkpoint inspect` and `sluice state dump` as a user runs them:
# a checkpoint with state, one with an uncommitted batch, and damaged ones (the error names the
# file). Usage: check_checkpoint_commands.sh <sluice binary>
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SLUICE="$(realpath "$1")"
enter_work_dir

# A windowed count (state: one row per user and window) after one committed batch.
"${SLUICE}" sql -w wh >/dev/null <<'EOF' || { echo "FAIL setup"; exit 1; }
CREATE TABLE clicks (user_id VARCHAR, t INTEGER);
CREATE STREAMING TABLE counts AS
SELECT user_id, window.start AS ws, count(*) AS c
FROM STREAM clicks WATERMARK timestamp_seconds(t) AS ts DELAY OF INTERVAL 5 SECONDS AS e
GROUP BY window(ts, '10 seconds'), user_id;
INSERT INTO clicks VALUES ('alice', 1), ('bob', 2), ('alice', 3);
REFRESH STREAMING TABLE counts;
EOF
CP=wh/_checkpoints/counts

check "inspect: query id" 0 "query id:             " -- "${SLUICE}" checkpoint inspect "${CP}"
check "inspect: committed" 0 "last committed batch: 0" -- "${SLUICE}" checkpoint inspect "${CP}"
check "inspect: nothing uncommitted" 0 "uncommitted batch:    none" -- "${SLUICE}" checkpoint inspect "${CP}"
check "inspect: source offset" 0 "source 0: {" -- "${SLUICE}" checkpoint inspect "${CP}"
check "inspect: conf" 0 "sluice.sql.shuffle.partitions = 4" -- "${SLUICE}" checkpoint inspect "${CP}"
check "inspect: operator" 0 "operator 0 'stateStoreSave'" -- "${SLUICE}" checkpoint inspect "${CP}"
check "inspect: partitions" 0 "store 'default', 4 partitions" -- "${SLUICE}" checkpoint inspect "${CP}"
check "inspect: versions" 0 "versions 1..1, latest snapshot none, 1 files" -- "${SLUICE}" checkpoint inspect "${CP}"
check "inspect: key schema" 0 "key:   user_id VARCHAR" -- "${SLUICE}" checkpoint inspect "${CP}"
json="$("${SLUICE}" checkpoint inspect "${CP}" --json)"
if python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["lastCommittedBatch"] == 0, r; assert r["uncommittedBatches"] == []; op=r["stateOperators"][0]; assert op["operatorName"] == "stateStoreSave"; assert len(op["stores"][0]["partitions"]) == 4; assert r["latestBatch"]["conf"]["sluice.sql.shuffle.partitions"] == "4"' "${json}"; then
  pass
else
  fail "inspect --json: ${json}"
fi

check "dump: header" 0 "operator 0 'stateStoreSave': 2 rows, state version 1 (after batch 0)" -- "${SLUICE}" state dump "${CP}"
check "dump: alice's window" 0 "alice" -- "${SLUICE}" state dump "${CP}"
check "dump: --operator 0" 0 "bob" -- "${SLUICE}" state dump "${CP}" --operator 0
check "dump: --json" 0 '"user_id":"alice"' -- "${SLUICE}" state dump "${CP}" --json
# columns: operator_id, operator_name, partition_id, user_id, window, count, evictAtMicros
lines="$("${SLUICE}" state dump "${CP}" --json | python3 -c 'import json,sys; rows=[json.loads(l) for l in sys.stdin]; print(sum(list(r.values())[5] for r in rows))')"
[[ "${lines}" == "3" ]] && pass || fail "dump --json counts sum to ${lines}, want 3"
check "dump: operator out of range" 1 "operator 2 is out of range: the query has 1 stateful operator: 0 ('stateStoreSave')" -- "${SLUICE}" state dump "${CP}" --operator 2

# An uncommitted batch: it crashed after its state commit, before commits/1.
"${SLUICE}" sql -w wh >/dev/null 2>&1 <<'EOF'
INSERT INTO clicks VALUES ('carol', 4);
SET sluice.test.crashAt = 'after_state_commit';
REFRESH STREAMING TABLE counts;
EOF
check "inspect: uncommitted batch" 0 "uncommitted batch:    1 (offsets written, not committed: re-run on restart)" -- "${SLUICE}" checkpoint inspect "${CP}"
check "inspect: still batch 0 committed" 0 "last committed batch: 0" -- "${SLUICE}" checkpoint inspect "${CP}"
check "inspect: uncommitted version on disk" 0 "versions 1..2" -- "${SLUICE}" checkpoint inspect "${CP}"
check "dump: committed state only" 0 "2 rows, state version 1 (after batch 0)" -- "${SLUICE}" state dump "${CP}"
check_not "dump: not the uncommitted row" "carol" -- "${SLUICE}" state dump "${CP}"
# The re-run commits it.
"${SLUICE}" sql -w wh "REFRESH STREAMING TABLE counts" >/dev/null
check "dump: after the re-run" 0 "carol" -- "${SLUICE}" state dump "${CP}"
check "inspect: after the re-run" 0 "uncommitted batch:    none" -- "${SLUICE}" checkpoint inspect "${CP}"

# A checkpoint without state: a stateless query.
"${SLUICE}" sql -w wh "CREATE STREAMING TABLE copy AS SELECT user_id FROM STREAM clicks; REFRESH STREAMING TABLE copy" >/dev/null
check "inspect: stateless" 0 "state operators:      none" -- "${SLUICE}" checkpoint inspect wh/_checkpoints/copy
check "dump: stateless" 1 "no state in checkpoint" -- "${SLUICE}" state dump wh/_checkpoints/copy

# Damaged files: each command fails naming the file.
rm -rf bad && cp -r "${CP}" bad && printf 'v1\n{"nextBatch' > bad/commits/0
check "corrupt commit" 1 "bad/commits/0" -- "${SLUICE}" checkpoint inspect bad
rm -rf bad && cp -r "${CP}" bad && printf 'garbage' > bad/offsets/1
check "corrupt offsets" 1 "bad/offsets/1" -- "${SLUICE}" checkpoint inspect bad
rm -rf bad && cp -r "${CP}" bad && printf '{"id":' > bad/metadata
check "corrupt metadata" 1 "bad/metadata" -- "${SLUICE}" checkpoint inspect bad
rm -rf bad && cp -r "${CP}" bad && printf 'v1\n{"operatorInfo"' > bad/state/0/_metadata/metadata
check "corrupt operator metadata (inspect)" 1 "bad/state/0/_metadata/metadata" -- "${SLUICE}" checkpoint inspect bad
check "corrupt operator metadata (dump)" 1 "bad/state/0/_metadata/metadata" -- "${SLUICE}" state dump bad
rm -rf bad && cp -r "${CP}" bad && printf 'v1\n{' > bad/state/0/0/_metadata/schema
check "corrupt state schema" 1 "bad/state/0/0/_metadata/schema" -- "${SLUICE}" checkpoint inspect bad
# A changelog with one flipped byte: its checksum no longer matches.
rm -rf bad && cp -r "${CP}" bad
changelog="$(ls bad/state/0/*/2.changelog | head -1)"
python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[len(b)//2] ^= 0xff; open(p,"wb").write(b)' "${changelog}"
check "corrupt changelog (dump)" 1 "${changelog#./}" -- "${SLUICE}" state dump bad
check "missing checkpoint" 1 "checkpoint directory nope does not exist" -- "${SLUICE}" checkpoint inspect nope

check "help: inspect example" 0 "sluice checkpoint inspect warehouse/_checkpoints/counts" -- "${SLUICE}" checkpoint inspect --help
check "help: dump example" 0 "sluice state dump warehouse/_checkpoints/counts" -- "${SLUICE}" state dump --help
finish
