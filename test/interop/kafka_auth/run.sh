#!/usr/bin/env bash
# run.sh <kafka_auth_test binary>: the Kafka authentication interop suite (ctest
# interop/kafka_auth). Starts the secure broker (scripts/kafka-secure.sh) in a temp dir, runs the
# suite with the build's librdkafka, then again with the newer librdkafka that the peers'
# confluent-kafka wheel ships (librdkafka keeps its C ABI within 2.x, so the same binary runs on
# it): the build's (Debian's 2.0.2) cannot do SCRAM against Kafka 4 brokers, and the second run
# shows the SCRAM translation working end to end. Stops the broker on every exit. Fails naming
# `make peers` when the broker or the venv is missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
source "${root}/scripts/peers/common.sh"
[[ $# -eq 1 ]] || { echo "usage: run.sh <kafka_auth_test>" >&2; exit 2; }
test_bin="$1"

"${root}/scripts/peers/kafka-jars.sh" --check
newer="$(compgen -G "${SLUICE_VENV}/lib/python3*/site-packages/confluent_kafka.libs/librdkafka-*.so.1" | head -n 1 || true)"
if [[ -z "${newer}" ]]; then
  echo "kafka_auth: confluent-kafka's librdkafka is not in ${SLUICE_VENV}: run \`make peers\`" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/sluice-kafka-auth-XXXXXX")"
cleanup() {
  "${root}/scripts/kafka-secure.sh" stop "${work}/broker" || true
  rm -rf "${work}"
}
trap cleanup EXIT
"${root}/scripts/kafka-secure.sh" start "${work}/broker"
export SLUICE_KAFKA_SECURE_ENV="${work}/broker/broker.env"

status=0
echo "== kafka_auth with the build's librdkafka"
"${test_bin}" || status=1
mkdir -p "${work}/lib"
ln -s "${newer}" "${work}/lib/librdkafka.so.1"
echo "== kafka_auth with the peers' librdkafka (${newer##*/})"
LD_LIBRARY_PATH="${work}/lib" "${test_bin}" || status=1
exit "${status}"
