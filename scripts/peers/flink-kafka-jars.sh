#!/usr/bin/env bash
# Resolves Flink's Kafka SQL connector (flink-kafka-jars.pom.xml) into ${SLUICE_JARS}/flink-kafka
# with Maven, once; bench/peers/flink_nexmark.py puts its jars on pipeline.jars.
#   flink-kafka-jars.sh           installs (a second run does nothing)
#   flink-kafka-jars.sh --check   exits 0 only when the connector is installed as pinned
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
maven_jars_main flink-kafka-jars flink-kafka 'flink-sql-connector-kafka-*.jar' "Flink's Kafka SQL connector" \
  keep "$@"
