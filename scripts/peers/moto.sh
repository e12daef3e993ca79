#!/usr/bin/env bash
# moto's S3 server for tests (docs/s3.md): one moto_server process on 127.0.0.1 at a free port,
# from the peers' venv (`make peers`, moto[server] in scripts/peers/requirements.txt). moto
# enforces S3's conditional writes (If-None-Match: * on PutObject and CompleteMultipartUpload).
#
#   moto.sh start DIR   starts the server (DIR must not hold a running one), waits up to 30 s
#                       until it answers, prints its endpoint ("http://127.0.0.1:PORT") and writes
#                       it to DIR/endpoint; DIR/pid, DIR/server.log
#   moto.sh stop DIR    stops it (SIGTERM, SIGKILL after 10 s); keeps DIR
#   moto.sh status DIR  exits 0 when the server of DIR runs
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
MOTO="${SLUICE_VENV}/bin/moto_server"

die() { echo "moto.sh: $*" >&2; exit 1; }
usage() { sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

running() {  # running DIR: the pid in DIR is a live moto_server
  local pid cmdline
  [[ -f "$1/pid" ]] || return 1
  pid="$(cat "$1/pid")"
  [[ -n "${pid}" ]] && kill -0 "${pid}" 2>/dev/null || return 1
  # Read whole (no `| grep -q`: with pipefail its early exit would fail the pipe).
  cmdline="$(tr '\0' ' ' < "/proc/${pid}/cmdline" 2>/dev/null || true)"
  [[ "${cmdline}" == *moto_server* ]]
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  local dir="$1" port endpoint i
  [[ -x "${MOTO}" ]] || die "moto_server is not installed in ${SLUICE_VENV}: run \`make peers\`"
  mkdir -p "${dir}"
  running "${dir}" && die "a moto server already runs for ${dir}"
  port="$(free_port)"
  endpoint="http://127.0.0.1:${port}"
  # setsid: the server gets its own process group, so stop ends it and nothing else. The server
  # writes its own pid: from a shell with job control (set -m) `&` makes setsid a group leader,
  # so setsid forks and $! would be the pid of a process that has already exited.
  rm -f "${dir}/pid"
  setsid sh -c 'echo $$ > "$1" && exec "$2" -H 127.0.0.1 -p "$3"' sh "${dir}/pid" "${MOTO}" \
    "${port}" >>"${dir}/server.log" 2>&1 < /dev/null &
  for ((i = 0; i < 300; i++)); do
    if [[ ! -s "${dir}/pid" ]]; then
      sleep 0.1
      continue
    fi
    if ! running "${dir}"; then
      tail -20 "${dir}/server.log" >&2
      die "moto_server exited while starting (log: ${dir}/server.log)"
    fi
    if curl -s -o /dev/null --max-time 2 "${endpoint}/moto-api/reset" -X POST; then
      echo "${endpoint}" > "${dir}/endpoint"
      echo "${endpoint}"
      return 0
    fi
    sleep 0.1
  done
  stop "${dir}"
  die "moto_server did not answer on ${endpoint} within 30 s (log: ${dir}/server.log)"
}

stop() {
  local dir="$1" pid i
  running "${dir}" || return 0
  pid="$(cat "${dir}/pid")"
  kill -TERM "${pid}" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    running "${dir}" || return 0
    sleep 0.1
  done
  kill -KILL "${pid}" 2>/dev/null || true
}

(($# == 2)) || usage
case "$1" in
  start) start "$2" ;;
  stop) stop "$2" ;;
  status) running "$2" ;;
  *) usage ;;
esac
