#!/usr/bin/env bash
# Resolves the Apache Kafka broker (kafka-jars.pom.xml) into ${SLUICE_JARS}/kafka with Maven, once.
# scripts/kafka.sh runs it from that folder (java -cp "${SLUICE_JARS}/kafka/*" kafka.Kafka ...).
#   kafka-jars.sh           installs (a second run does nothing)
#   kafka-jars.sh --check   exits 0 only when the broker is installed as pinned
# The stamp (${SLUICE_CACHE}/stamps/kafka-jars) holds the pom's sha256 and is written last, so a
# waiting reader that sees it sees every jar.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

want="$(sha256sum "${PEERS_DIR}/kafka-jars.pom.xml" | cut -d' ' -f1)"
installed() {
  stamp_matches kafka-jars "${want}" && compgen -G "${SLUICE_JARS}/kafka/kafka_2.13-*.jar" >/dev/null
}
if [[ "${1:-}" == "--check" ]]; then
  installed && exit 0
  echo "the Kafka broker is not installed as pinned in ${SLUICE_JARS}/kafka: run \`make peers\`" >&2
  exit 1
fi
[[ $# -eq 0 ]] || { echo "usage: kafka-jars.sh [--check]" >&2; exit 2; }
installed && exit 0
command -v mvn >/dev/null || { echo "peers: Maven (mvn) is needed to fetch the Kafka broker" >&2; exit 1; }
echo "peers: resolving the Apache Kafka broker with Maven into ${SLUICE_JARS}/kafka"
rm -f "${SLUICE_CACHE}/stamps/kafka-jars"
rm -rf "${SLUICE_JARS}/kafka"
mkdir -p "${SLUICE_JARS}/kafka"
mvn -q -B -f "${PEERS_DIR}/kafka-jars.pom.xml" -Dmaven.repo.local="${SLUICE_M2}" \
  dependency:copy-dependencies -DoutputDirectory="${SLUICE_JARS}/kafka" -DincludeScope=runtime
stamp_write kafka-jars "${want}"
