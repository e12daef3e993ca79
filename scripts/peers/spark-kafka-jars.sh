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

want="$(cat "${PEERS_DIR}/spark-kafka-jars.pom.xml" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"
installed() {
  stamp_matches spark-kafka-jars "${want}" &&
    compgen -G "${SLUICE_JARS}/spark-kafka/spark-sql-kafka-0-10_*.jar" >/dev/null
}
if [[ "${1:-}" == "--check" ]]; then
  installed && exit 0
  echo "Spark's Kafka connector is not installed as pinned in ${SLUICE_JARS}/spark-kafka: run \`make peers\`" >&2
  exit 1
fi
[[ $# -eq 0 ]] || { echo "usage: spark-kafka-jars.sh [--check]" >&2; exit 2; }
installed && exit 0
command -v mvn >/dev/null || { echo "peers: Maven (mvn) is needed to fetch Spark's Kafka connector" >&2; exit 1; }
echo "peers: resolving Spark's Kafka connector with Maven into ${SLUICE_JARS}/spark-kafka"
rm -f "${SLUICE_CACHE}/stamps/spark-kafka-jars"
rm -rf "${SLUICE_JARS}/spark-kafka"
mkdir -p "${SLUICE_JARS}/spark-kafka"
mvn -q -B -Dstyle.color=never -f "${PEERS_DIR}/spark-kafka-jars.pom.xml" \
  -Dmaven.repo.local="${SLUICE_M2}" dependency:copy-dependencies \
  -DoutputDirectory="${SLUICE_JARS}/spark-kafka" -DincludeScope=runtime
spark_jars="$("${SLUICE_VENV}/bin/python" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
for jar in "${SLUICE_JARS}/spark-kafka"/*.jar; do
  artifact="$(basename "${jar}" | sed -E 's/-[0-9][^-]*(-[0-9]+)?\.jar$//')"
  if compgen -G "${spark_jars}/${artifact}-[0-9]*.jar" >/dev/null; then rm "${jar}"; fi
done
stamp_write spark-kafka-jars "${want}"
