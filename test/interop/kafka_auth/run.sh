#!/usr/bin/env bash
# run.sh <kafka_auth_test binary>: the Kafka authentication interop suite (ctest
# interop/kafka_auth). Starts the secure broker (scripts/kafka-secure.sh) in a temp dir, runs the
# suite (linked with the pinned librdkafka of scripts/librdkafka.sh, which does SCRAM with Kafka 4
# brokers) and stops the broker on every exit. Fails naming `make peers` when the broker is missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
source "${root}/scripts/peers/common.sh"
[[ $# -eq 1 ]] || { echo "usage: run.sh <kafka_auth_test>" >&2; exit 2; }
test_bin="$1"

"${root}/scripts/peers/kafka-jars.sh" --check

work="$(mktemp -d "${TMPDIR:-/tmp}/sluice-kafka-auth-XXXXXX")"
cleanup() {
  "${root}/scripts/kafka-secure.sh" stop "${work}/broker" || true
  rm -rf "${work}"
}
trap cleanup EXIT
"${root}/scripts/kafka-secure.sh" start "${work}/broker"
export SLUICE_KAFKA_SECURE_ENV="${work}/broker/broker.env"
"${test_bin}"
