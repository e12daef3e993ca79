#!/usr/bin/env bash
# Resolves Spark's Kafka connector (spark-kafka-jars.pom.xml) into ${SLUICE_JARS}/spark-kafka with
# Maven, once; peers.spark(kafka=True) puts its jars on spark.jars. Jars of artifacts that the
# pyspark wheel already ships are left out, so that Spark runs on its own versions only (as
# spark-jars.sh does). A folder of its own, so that installing it never touches the Delta jars a
# running Spark of another suite has loaded. Needs python.sh first.
#   spark-kafka-jars.sh           installs (a second run does nothing)
#   spark-kafka-jars.sh --check   exits 0 only when the connector is installed as pinned
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
maven_jars_main spark-kafka-jars spark-kafka 'spark-sql-kafka-0-10_*.jar' "Spark's Kafka connector" \
  prune-pyspark "$@"
