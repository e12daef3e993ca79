#!/usr/bin/env bash
# Runs one fuzz target (test/fuzz/CMakeLists.txt) over its committed corpus.
#   run_fuzzer.sh <fuzzer> <corpus dir> replay   corpus, prefixes, 500 mutations of seed 1
#   run_fuzzer.sh <fuzzer> <corpus dir> timed    SLUICE_FUZZ_SECONDS (default 60) of mutations
# The first directory given to the fuzzer is a scratch one (libFuzzer writes the inputs it finds
# there, never into the committed corpus); crash inputs go to SLUICE_FUZZ_ARTIFACTS (default: a
# directory under the current one), and the line that reproduces a failure is printed.
set -euo pipefail
FUZZER="$1"
CORPUS="$2"
MODE="$3"
[[ -d "${CORPUS}" ]] || { echo "run_fuzzer.sh: no corpus directory ${CORPUS}" >&2; exit 2; }
SCRATCH="$(mktemp -d)"
trap 'rm -rf "${SCRATCH}"' EXIT
ART="${SLUICE_FUZZ_ARTIFACTS:-${PWD}/fuzz-artifacts}"
mkdir -p "${ART}"
name="$(basename "${FUZZER}")"
case "${MODE}" in
  replay) args=(-seed=1 -runs=500) ;;
  timed) args=(-max_total_time="${SLUICE_FUZZ_SECONDS:-60}") ;;
  *) echo "run_fuzzer.sh: mode is replay or timed" >&2; exit 2 ;;
esac
echo "${name} ${args[*]} -artifact_prefix=${ART}/${name}- ${SCRATCH} ${CORPUS}"
if ! "${FUZZER}" "${args[@]}" -artifact_prefix="${ART}/${name}-" "${SCRATCH}" "${CORPUS}"; then
  echo "FAIL: ${name} (${MODE}); crash inputs in ${ART}; replay one with: ${FUZZER} <file>" >&2
  exit 1
fi
