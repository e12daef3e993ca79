#!/usr/bin/env bash
# A bounded fault campaign over the crash scripts of test/crash/ (issue 24 §1, a first step of
# `make faults`): ROUNDS rounds, each running every script once with a seed drawn from the
# campaign's seed, so that a run of ROUNDS rounds is reproducible from one number and each failure
# from the line it prints. Each script is its own oracle (every input row exactly once, or the
# table equal to an undisturbed run's) and fails naming what was lost, duplicated or wrong.
#
# Usage: campaign.sh <sluice> <sluice_mock_kafka> [rounds (default 1)] [seed] [kills per script (default 5)]
# Prints one line per failure (the command that reproduces it) and at the end:
#   campaign: rounds=R runs=N failed=F seed=S
# and exits 1 when any run failed.
set -uo pipefail
SLUICE="$(realpath "$1")"
MOCK="$(realpath "$2")"
ROUNDS="${3:-1}"
SEED="${4:-$$}"
KILLS="${5:-5}"
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RANDOM="${SEED}"
LOGS="$(mktemp -d)"
trap 'rm -rf "${LOGS}"' EXIT
echo "campaign: rounds=${ROUNDS} seed=${SEED} kills=${KILLS} (rerun: $0 $1 $2 ${ROUNDS} ${SEED} ${KILLS})"

runs=0
failed=0
run() {  # run <name> <command...>: one script run; its output kept only when it fails
  local name="$1"
  shift
  runs=$((runs + 1))
  if "$@" > "${LOGS}/out" 2>&1; then
    echo "  ok   ${name}: $(grep -v '^PASS$' "${LOGS}/out" | tail -n 1 | cut -c 1-160)"
  else
    failed=$((failed + 1))
    echo "  FAIL ${name}: rerun: $*"
    tail -n 20 "${LOGS}/out" | sed 's/^/       /'
  fi
}

for ((round = 0; round < ROUNDS; round++)); do
  echo "round ${round}"
  run sigkill_sluice_run "${DIR}/sigkill_sluice_run.sh" "${SLUICE}" "${KILLS}" "${RANDOM}"
  run sigkill_dedup_run "${DIR}/sigkill_dedup_run.sh" "${SLUICE}" "${KILLS}" "${RANDOM}"
  run sigkill_kafka_run "${DIR}/sigkill_kafka_run.sh" "${SLUICE}" "${MOCK}" "${KILLS}" "${RANDOM}"
  run file_source_log_torn "${DIR}/file_source_log_torn.sh" "${SLUICE}" 12 "${RANDOM}"
  run offset_log_torn "${DIR}/offset_log_torn.sh" "${SLUICE}" 4 "${RANDOM}"
done
echo "campaign: rounds=${ROUNDS} runs=${runs} failed=${failed} seed=${SEED}"
((failed == 0))
