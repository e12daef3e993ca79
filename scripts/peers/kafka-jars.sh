#!/usr/bin/env bash
# Resolves the Apache Kafka broker (kafka-jars.pom.xml) into ${SLUICE_JARS}/kafka with Maven, once.
# scripts/kafka.sh runs it from that folder (java -cp "${SLUICE_JARS}/kafka/*" kafka.Kafka ...).
#   kafka-jars.sh           installs (a second run does nothing)
#   kafka-jars.sh --check   exits 0 only when the broker is installed as pinned
# The stamp (${SLUICE_CACHE}/stamps/kafka-jars) is written last (maven_jars_main in common.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
maven_jars_main kafka-jars kafka 'kafka_2.13-*.jar' "the Kafka broker" keep "$@"
