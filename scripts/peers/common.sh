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
