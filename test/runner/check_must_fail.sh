#!/usr/bin/env bash
# The runner's own test: every file in must_fail/ must make `sluice test` exit 1 and print each
# line the file announces with '# expect: <text>'. Usage: check_must_fail.sh <sluice binary>
set -uo pipefail
SLUICE="$(realpath "$1")"
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/must_fail"
failures=0
checked=0
for file in "${DIR}"/*.test; do
  output="$("${SLUICE}" test "${file}" 2>&1)"
  code=$?
  checked=$((checked + 1))
  if [[ ${code} -ne 1 ]]; then
    echo "FAIL ${file}: exit code ${code}, expected 1"; echo "${output}"; failures=$((failures + 1)); continue
  fi
  while IFS= read -r want; do
    if [[ "${output}" != *"${want}"* ]]; then
      echo "FAIL ${file}: output lacks: ${want}"; echo "--- output:"; echo "${output}"
      failures=$((failures + 1))
    fi
  done < <(sed -n 's/^# expect: //p' "${file}")
done
# A file that passes and one that is skipped must exit 0 together.
ok_out="$("${SLUICE}" test "${DIR}/../../sql/basics/select.test" "${DIR}/../../sql/runner/require.test" 2>&1)"
if [[ $? -ne 0 || "${ok_out}" != *"1 passed, 0 failed, 1 skipped"* ]]; then
  echo "FAIL passing files: ${ok_out}"; failures=$((failures + 1))
fi
# A missing path is a failure.
"${SLUICE}" test "${DIR}/does_not_exist.test" >/dev/null 2>&1 && { echo "FAIL missing path passed"; failures=$((failures + 1)); }
echo "${checked} must-fail files checked"
echo "$((checked - failures < 0 ? 0 : checked - failures)) passed, ${failures} failed"
[[ ${failures} -eq 0 ]]
