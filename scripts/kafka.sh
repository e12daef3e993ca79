#!/usr/bin/env bash
# A real Apache Kafka broker for tests: one KRaft node (broker and controller in one process) on
# 127.0.0.1, two free ports, its state in one directory. The broker comes from `make peers`
# (scripts/peers/kafka-jars.sh); without it every command fails naming `make peers`.
#
#   kafka.sh start [DIR] [--bootstrap-file F] [--prop KEY=VALUE]...
#       formats a new log directory in DIR (a new temp dir when omitted; DIR must not hold a
#       broker already), starts the broker and waits (up to 90 s) until it serves; prints the
#       bootstrap servers ("127.0.0.1:PORT") on stdout and writes them to F and DIR/bootstrap.
#       --prop adds a broker setting (server.properties syntax), e.g. log.retention.check.interval.ms=500.
#   kafka.sh stop DIR        stops the broker (SIGTERM, then SIGKILL after 30 s) and removes DIR
#   kafka.sh halt DIR [--kill]
#                            stops the broker (SIGTERM and wait; --kill: SIGKILL) and keeps DIR
#   kafka.sh resume DIR      starts the halted broker again: same port, same data
#   kafka.sh status DIR      exits 0 when the broker of DIR runs
#
# DIR holds server.properties, log4j2.properties, data/ (the log), server.log (the broker's log,
# appended over restarts), pid and bootstrap. The JVM gets -Xmx512m (KAFKA_HEAP to change it).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "${REPO}/scripts/peers/common.sh"
JARS="${SLUICE_JARS}/kafka"
HEAP="${KAFKA_HEAP:--Xmx512m}"

die() { echo "kafka.sh: $*" >&2; exit 1; }
usage() { sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

need_broker() {
  "${REPO}/scripts/peers/kafka-jars.sh" --check >/dev/null 2>&1 ||
    die "the Kafka broker is not installed in ${JARS}: run \`make peers\`"
  command -v java >/dev/null || die "java is not on PATH (the broker needs Java 17 or newer)"
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on now (the kernel picks it).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

java_run() {  # java_run DIR MAINCLASS ARGS...: the broker's classpath and logging (exec'd)
  local dir="$1"
  shift
  exec java ${HEAP} -Xms64m -XX:+UseSerialGC -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="${dir}/log4j2.properties" -cp "${JARS}/*" "$@"
}

running() {  # running DIR: the pid in DIR is a live broker process
  local pid
  [[ -f "$1/pid" ]] || return 1
  pid="$(cat "$1/pid")"
  [[ -n "${pid}" ]] && kill -0 "${pid}" 2>/dev/null &&
    tr '\0' ' ' < "/proc/${pid}/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka'
}

# launch DIR: starts the broker of DIR in the background and waits until it serves.
launch() {
  local dir="$1" bootstrap port i
  bootstrap="$(cat "${dir}/bootstrap")"
  port="${bootstrap##*:}"
  local mark
  mark="$(wc -l < "${dir}/server.log" 2>/dev/null || echo 0)"
  (java_run "${dir}" kafka.Kafka "${dir}/server.properties" >> "${dir}/stdout.log" 2>&1) &
  local pid=$!
  echo "${pid}" > "${dir}/pid"
  for ((i = 0; i < 900; i++)); do  # 90 s
    # Alive is enough here: until the subshell has exec'd java its cmdline is bash's, which
    # `running` (a kafka.Kafka cmdline) would take for a dead broker on a loaded machine.
    if ! kill -0 "${pid}" 2>/dev/null; then
      tail -n 40 "${dir}/server.log" "${dir}/stdout.log" >&2 2>/dev/null || true
      die "the broker in ${dir} exited while starting (its log is above)"
    fi
    if tail -n +"$((mark + 1))" "${dir}/server.log" 2>/dev/null | grep -q 'Kafka Server started' &&
      (exec 3<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  kill -9 "$(cat "${dir}/pid")" 2>/dev/null || true
  die "the broker in ${dir} did not start within 90 s (see ${dir}/server.log)"
}

# halt DIR [--kill]: stops the broker process of DIR and waits (bounded) until it is gone.
halt() {
  local dir="$1" sig=TERM pid i
  [[ "${2:-}" == "--kill" ]] && sig=KILL
  running "${dir}" || return 0
  pid="$(cat "${dir}/pid")"
  kill -s "${sig}" "${pid}" 2>/dev/null || true
  for ((i = 0; i < 300; i++)); do  # 30 s
    kill -0 "${pid}" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "${pid}" 2>/dev/null; then
    echo "kafka.sh: the broker (pid ${pid}) did not stop within 30 s: SIGKILL" >&2
    kill -9 "${pid}" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      kill -0 "${pid}" 2>/dev/null || break
      sleep 0.1
    done
  fi
  rm -f "${dir}/pid"
}

cmd_start() {
  local dir="" bootstrap_file="" props=()
  while (($#)); do
    case "$1" in
      --bootstrap-file) bootstrap_file="${2:?--bootstrap-file needs a file}"; shift 2 ;;
      --prop) props+=("${2:?--prop needs KEY=VALUE}"); shift 2 ;;
      -*) usage ;;
      *) [[ -z "${dir}" ]] || usage; dir="$1"; shift ;;
    esac
  done
  need_broker
  if [[ -z "${dir}" ]]; then
    dir="$(mktemp -d "${TMPDIR:-/tmp}/sluice-kafka.XXXXXX")"
  else
    mkdir -p "${dir}"
    [[ ! -e "${dir}/server.properties" ]] || die "${dir} already holds a broker (stop it first)"
  fi
  dir="$(cd "${dir}" && pwd)"
  local port cport
  port="$(free_port)"
  cport="$(free_port)"
  while [[ "${cport}" == "${port}" ]]; do cport="$(free_port)"; done
  cat > "${dir}/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:${cport}
listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${cport}
advertised.listeners=PLAINTEXT://127.0.0.1:${port}
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=${dir}/data
num.partitions=1
num.network.threads=2
num.io.threads=2
background.threads=2
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
delete.topic.enable=true
# Tests produce records with CreateTimes years old; the default retention (7 days) would delete
# them at its first check (30 s after start, then every 5 minutes). A topic sets its own.
log.retention.ms=-1
EOF
  local p
  for p in "${props[@]}"; do
    [[ "${p}" == *=* ]] || die "--prop ${p}: expected KEY=VALUE"
    echo "${p}" >> "${dir}/server.properties"
  done
  cat > "${dir}/log4j2.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${dir}/server.log
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
EOF
  echo "127.0.0.1:${port}" > "${dir}/bootstrap"
  local cluster_id
  cluster_id="$( (java_run "${dir}" kafka.tools.StorageTool random-uuid) 2>>"${dir}/stdout.log")" ||
    die "kafka-storage random-uuid failed (see ${dir}/stdout.log)"
  (java_run "${dir}" kafka.tools.StorageTool format -t "${cluster_id}" \
    -c "${dir}/server.properties") >> "${dir}/stdout.log" 2>&1 ||
    { cat "${dir}/stdout.log" >&2; die "kafka-storage format failed in ${dir}"; }
  launch "${dir}"
  if [[ -n "${bootstrap_file}" ]]; then
    cp "${dir}/bootstrap" "${bootstrap_file}.tmp" && mv "${bootstrap_file}.tmp" "${bootstrap_file}"
  fi
  echo "kafka.sh: broker at $(cat "${dir}/bootstrap") in ${dir} (stop: scripts/kafka.sh stop ${dir})" >&2
  cat "${dir}/bootstrap"
}

need_dir() {
  [[ -n "${1:-}" ]] || usage
  [[ -f "$1/server.properties" ]] || die "$1 holds no broker started by kafka.sh"
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  stop)
    [[ $# -eq 2 ]] || usage
    if [[ -d "$2" ]]; then
      need_dir "$2"
      halt "$2"
      rm -rf "$2"
    fi
    ;;
  halt)
    [[ $# -ge 2 && $# -le 3 ]] || usage
    need_dir "$2"
    halt "$2" "${3:-}"
    ;;
  resume)
    [[ $# -eq 2 ]] || usage
    need_dir "$2"
    need_broker
    running "$2" && die "the broker in $2 is running already"
    launch "$2"
    cat "$2/bootstrap"
    ;;
  status)
    [[ $# -eq 2 ]] || usage
    running "$2"
    ;;
  *) usage ;;
esac
