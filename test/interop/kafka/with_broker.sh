#!/usr/bin/env bash
# Runs one command against a real Apache Kafka broker: starts a fresh KRaft broker on loopback
# (scripts/kafka.sh, in a temp dir), runs the command with
#   SLUICE_KAFKA_BOOTSTRAP  the broker's bootstrap servers (the Kafka test suites and
#                           sluice_mock_kafka then use it instead of librdkafka's mock cluster)
#   SLUICE_KAFKA_DIR        the broker's state dir, for fault tests (scripts/kafka.sh halt|resume)
# and stops the broker whatever happens. Exits with the command's status. Without the broker
# installed it fails naming `make peers`.
#
# Usage: with_broker.sh [--prop KEY=VALUE]... [--] COMMAND [ARGS...]
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
KAFKA="${REPO}/scripts/kafka.sh"
props=()
while (($#)); do
  case "$1" in
    --prop) props+=(--prop "$2"); shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
(($#)) || { echo "usage: with_broker.sh [--prop KEY=VALUE]... [--] COMMAND [ARGS...]" >&2; exit 2; }
if ! "${REPO}/scripts/peers/kafka-jars.sh" --check; then
  echo "FAIL: the Kafka broker is missing: run \`make peers\`"
  exit 1
fi
SLUICE_KAFKA_DIR="$(mktemp -d "${TMPDIR:-/tmp}/sluice-interop-kafka.XXXXXX")"
export SLUICE_KAFKA_DIR
cleanup() { "${KAFKA}" stop "${SLUICE_KAFKA_DIR}"; }
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
started=$(date +%s)
if ! SLUICE_KAFKA_BOOTSTRAP="$("${KAFKA}" start "${SLUICE_KAFKA_DIR}" "${props[@]}")"; then
  echo "FAIL: the Kafka broker did not start"
  exit 1
fi
export SLUICE_KAFKA_BOOTSTRAP
echo "with_broker: Kafka broker at ${SLUICE_KAFKA_BOOTSTRAP} (started in $(($(date +%s) - started)) s)"
"$@"
code=$?
echo "with_broker: $1 exited ${code}"
exit "${code}"
