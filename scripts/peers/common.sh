# Sourced by the peers scripts: where the peers live, and a stamp helper.
# The cache is outside the clone so that a fresh clone (and CI on the same machine) reuses it.
SLUICE_CACHE="${SLUICE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sluice}"
SLUICE_VENV="${SLUICE_CACHE}/venv"
SLUICE_M2="${SLUICE_CACHE}/m2"          # Maven's local repository for the peers' jars
SLUICE_JARS="${SLUICE_CACHE}/jars"      # one folder of resolved jars per peer and version
PEERS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# stamp_matches NAME TEXT: true when NAME's stamp holds TEXT (the peer is installed as pinned).
stamp_matches() { [[ -f "${SLUICE_CACHE}/stamps/$1" && "$(cat "${SLUICE_CACHE}/stamps/$1")" == "$2" ]]; }
stamp_write() { mkdir -p "${SLUICE_CACHE}/stamps" && printf '%s' "$2" > "${SLUICE_CACHE}/stamps/$1"; }

# maven_jars_main NAME DIR GLOB WHAT PRUNE [ARG]: the whole of a jars script (kafka-jars.sh,
# spark-kafka-jars.sh); exits. Resolves the runtime dependencies of ${PEERS_DIR}/NAME.pom.xml with
# Maven into ${SLUICE_JARS}/DIR, once:
#   NAME.sh           installs (a second run does nothing)
#   NAME.sh --check   exits 0 only when installed as pinned; otherwise says so, naming `make peers`
# Installed as pinned: the stamp NAME holds the sha256 of the pom, the calling script and this
# function, and a jar in DIR matches GLOB. The stamp is written last, so a waiting reader that sees
# it sees every jar. WHAT names the peer in messages. PRUNE is `prune-pyspark` to leave out the
# jars of artifacts that the pyspark wheel already ships, so that Spark runs on its own versions
# only (needs python.sh first), or `keep`.
maven_jars_main() {
  local name="$1" dir="${SLUICE_JARS}/$2" glob="$3" what="$4" prune="$5"
  shift 5
  [[ "${prune}" == keep || "${prune}" == prune-pyspark ]] ||
    { echo "maven_jars_main: PRUNE is keep or prune-pyspark, not '${prune}'" >&2; exit 2; }
  local pom="${PEERS_DIR}/${name}.pom.xml" want
  want="$({ cat "${pom}" "${BASH_SOURCE[1]}"; declare -f maven_jars_main; } | sha256sum | cut -d' ' -f1)"
  _maven_jars_installed() { stamp_matches "${name}" "${want}" && compgen -G "${dir}/${glob}" >/dev/null; }
  if [[ "${1:-}" == "--check" && $# -eq 1 ]]; then
    _maven_jars_installed && exit 0
    echo "${what} is not installed as pinned in ${dir}: run \`make peers\`" >&2
    exit 1
  fi
  [[ $# -eq 0 ]] || { echo "usage: ${name}.sh [--check]" >&2; exit 2; }
  _maven_jars_installed && exit 0
  command -v mvn >/dev/null || { echo "peers: Maven (mvn) is needed to fetch ${what}" >&2; exit 1; }
  echo "peers: resolving ${what} with Maven into ${dir}"
  rm -f "${SLUICE_CACHE}/stamps/${name}"
  # Resolved beside DIR and moved into place by two renames, so that the jars a running JVM (a
  # broker of another suite) was started with are missing for an instant, not for the whole
  # resolution.
  local next="${dir}.next.$$"
  rm -rf "${next}"
  mkdir -p "${next}"
  mvn -q -B -Dstyle.color=never -f "${pom}" -Dmaven.repo.local="${SLUICE_M2}" \
    dependency:copy-dependencies -DoutputDirectory="${next}" -DincludeScope=runtime
  case "${prune}" in
    keep) ;;
    prune-pyspark)
      local spark_jars jar artifact
      spark_jars="$("${SLUICE_VENV}/bin/python" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
      for jar in "${next}"/*.jar; do
        artifact="$(basename "${jar}" | sed -E 's/-[0-9][^-]*(-[0-9]+)?\.jar$//')"
        if compgen -G "${spark_jars}/${artifact}-[0-9]*.jar" >/dev/null; then rm "${jar}"; fi
      done
      ;;
  esac
  if [[ -d "${dir}" ]]; then mv "${dir}" "${dir}.old.$$"; fi
  mv "${next}" "${dir}"
  rm -rf "${dir}.old.$$"
  stamp_write "${name}" "${want}"
  exit 0
}
