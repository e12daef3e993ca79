#!/usr/bin/env bash
# Resolves the Delta Lake jars for Spark (spark-jars.pom.xml) into ${SLUICE_JARS}/delta with Maven,
# once. Tests put every jar of that folder on spark.jars. Jars of artifacts that the pyspark wheel
# already ships (Hadoop, Jackson, Parquet, Scala, log4j, ...: Delta's kernel pulls older versions
# of them) are left out, so that Spark runs on its own versions only. Needs python.sh first.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# `spark-jars.sh --check` exits 0 only when the jars are installed as pinned.
want="$(cat "${PEERS_DIR}/spark-jars.pom.xml" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"
installed() { stamp_matches spark-jars "${want}" && compgen -G "${SLUICE_JARS}/delta/*.jar" >/dev/null; }
if [[ "${1:-}" == "--check" ]]; then installed; exit; fi
installed && exit 0
command -v mvn >/dev/null || { echo "peers: Maven (mvn) is needed to fetch the Delta jars" >&2; exit 1; }
echo "peers: resolving the Delta Lake jars with Maven into ${SLUICE_JARS}/delta"
rm -rf "${SLUICE_JARS}/delta"
mkdir -p "${SLUICE_JARS}/delta"
mvn -q -B -Dstyle.color=never -f "${PEERS_DIR}/spark-jars.pom.xml" -Dmaven.repo.local="${SLUICE_M2}" \
  dependency:copy-dependencies -DoutputDirectory="${SLUICE_JARS}/delta" -DincludeScope=runtime
spark_jars="$("${SLUICE_VENV}/bin/python" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
for jar in "${SLUICE_JARS}/delta"/*.jar; do
  artifact="$(basename "${jar}" | sed -E 's/-[0-9][^-]*(-[0-9]+)?\.jar$//')"
  if compgen -G "${spark_jars}/${artifact}-[0-9]*.jar" >/dev/null; then rm "${jar}"; fi
done
stamp_write spark-jars "${want}"
