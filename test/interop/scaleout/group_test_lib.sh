# Helpers of the group-mode interop tests (group_kill_join.sh, group_zombie.sh), sourced after
# they set fail(), PIDS (the processes started), PARTITIONS, KAFKA_BOOTSTRAP and a table()
# printing "count,distinct,min,max" of the table's ids. Each process NAME logs to NAME.log.

# The last 40 lines of every process's log and, when gdb is installed, the threads' stacks of
# the processes still running (to see where one hangs).
dump_logs() {
  local f pid
  for f in [a-z].log; do echo "---- ${f}"; tail -n 40 "${f}"; done
  if command -v gdb > /dev/null; then
    for pid in "${PIDS[@]}"; do
      kill -0 "${pid}" 2> /dev/null || continue
      echo "---- stacks of ${pid}"
      timeout 60 gdb -p "${pid}" -batch -ex 'thread apply all bt 12' 2>&1 | grep -E '^(Thread|#)' | head -n 200
    done
  fi
}
# produce FIRST LAST: records {"id": FIRST..LAST} into topic events, id % PARTITIONS the partition.
produce() {
  local p id
  for ((p = 0; p < PARTITIONS; p++)); do
    for ((id = $1; id <= $2; id++)); do
      if ((id % PARTITIONS == p)); then echo "{\"id\": ${id}}"; fi
    done | kcat -P -b "${KAFKA_BOOTSTRAP}" -t events -p "${p}" 2>> kcat.log ||
      { cat kcat.log; fail "kcat could not produce"; }
  done
}
# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.5 s, bounded; fails with the logs.
wait_for() {
  local limit=$(($1 * 2)) what="$2" i
  shift 2
  for ((i = 0; i < limit; i++)); do
    "$@" && return 0
    sleep 0.5
  done
  dump_logs
  fail "${what} (waited ${limit} polls)"
}
# owned NAME: the partitions NAME.log says it owns now ("owned now: 0, 3"; "none").
owned() { grep -o 'owned now: [0-9, a-z]*' "$1.log" | tail -n 1 | sed 's/owned now: //'; }
owns_some() { local o; o="$(owned "$1")"; [[ -n "${o}" && "${o}" != none ]]; }
table_is() { [[ "$(table)" == "$1" ]]; }
