# Shared by the shell checks of test/: source it after `set -uo pipefail`.
# Counts checks in `passed`/`failed`; `finish` prints the tally and fails the script when any
# check failed (call it last). `enter_work_dir` gives the script a temporary working directory;
# `sql` runs one statement against its warehouse.
passed=0
failed=0

pass() { passed=$((passed + 1)); }
fail() {  # fail <message...>: one failed check, the message on stdout
  echo "FAIL $*"
  failed=$((failed + 1))
}

check() {  # check <name> <expected exit code> <expected output substring> -- command...
  local name="$1" want_code="$2" want="$3"
  shift 4
  local out code
  out="$("$@" 2>&1)"
  code=$?
  if [[ ${code} -ne ${want_code} || "${out}" != *"${want}"* ]]; then
    fail "${name}: exit ${code} (want ${want_code}, output containing '${want}'); output:"
    echo "${out}"
  else
    pass
  fi
}

check_not() {  # check_not <name> <unexpected substring> -- command...
  local name="$1" unwanted="$2"
  shift 3
  local out
  out="$("$@" 2>&1)"
  if [[ "${out}" == *"${unwanted}"* ]]; then
    fail "${name}: output contains '${unwanted}':"
    echo "${out}"
  else
    pass
  fi
}

finish() {
  echo "${passed} passed, ${failed} failed"
  [[ ${failed} -eq 0 ]]
}

# enter_work_dir: a fresh temporary directory as WORK and the current directory, removed when the
# script exits. A script that needs more at exit sets its own EXIT trap afterwards, ending with
# `rm -rf "${WORK}"`.
enter_work_dir() {
  WORK="$(mktemp -d)"
  trap 'rm -rf "${WORK}"' EXIT
  cd "${WORK}" || exit 1
}

# sql <statement>: its result rows as CSV without the header, quotes or CRs, run by ${SLUICE} over
# the warehouse ./wh.
sql() { "${SLUICE}" sql -w wh --format csv "$1" | tail -n +2 | tr -d '\r"'; }
