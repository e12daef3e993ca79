#!/usr/bin/env bash
# `make peers`: installs the real systems Sluice is checked against, pinned, into
# ${XDG_CACHE_HOME:-~/.cache}/sluice (outside the clone; a second run does nothing):
#   scripts/peers/python.sh      pyspark, delta-spark, deltalake, duckdb, pyarrow, confluent-kafka,
#                                moto[server], pytest in a venv (requirements.txt)
#   scripts/peers/spark-jars.sh  the Delta Lake jars for that Spark, via Maven
#   scripts/peers/spark-kafka-jars.sh  Spark's Kafka connector for that Spark, via Maven
#   scripts/peers/kafka-jars.sh  an Apache Kafka broker (KRaft), via Maven
#   scripts/peers/flink.sh       Apache Flink (PyFlink, its own venv) and its Kafka SQL connector
#   scripts/peers/kubernetes-check.sh  deploy/kubernetes/check built with Go (k8s.io/api)
set -euo pipefail
PEERS="$(cd "$(dirname "${BASH_SOURCE[0]}")/peers" && pwd)"
for step in python spark-jars spark-kafka-jars kafka-jars flink kubernetes-check; do
  if [[ -x "${PEERS}/${step}.sh" ]]; then "${PEERS}/${step}.sh"; fi
done
source "${PEERS}/common.sh"
echo "peers: ready in ${SLUICE_CACHE} ($(du -sh "${SLUICE_CACHE}" 2>/dev/null | cut -f1))"
