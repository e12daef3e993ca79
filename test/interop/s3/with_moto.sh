#!/usr/bin/env bash
# Runs one command against moto's S3 server: starts a fresh server on a free loopback port
# (scripts/peers/moto.sh, in a temp dir), runs the command with the AWS environment pointing at
# it, and stops the server whatever happens. Exits with the command's status. Without moto
# installed it fails naming `make peers`.
#
#   AWS_ENDPOINT_URL_S3   the server ("http://127.0.0.1:PORT"); path-style addressing follows
#   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY   "testing" (moto accepts any)
#   AWS_REGION            us-east-1
#   AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE   empty files, so ~/.aws does not leak in
#   SLUICE_MOTO_DIR       the server's dir (server.log)
#
# Usage: with_moto.sh COMMAND [ARGS...]
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
MOTO="${REPO}/scripts/peers/moto.sh"
(($#)) || { echo "usage: with_moto.sh COMMAND [ARGS...]" >&2; exit 2; }
SLUICE_MOTO_DIR="$(mktemp -d "${TMPDIR:-/tmp}/sluice-interop-moto.XXXXXX")"
export SLUICE_MOTO_DIR
cleanup() { "${MOTO}" stop "${SLUICE_MOTO_DIR}"; rm -rf "${SLUICE_MOTO_DIR}"; }
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
if ! AWS_ENDPOINT_URL_S3="$("${MOTO}" start "${SLUICE_MOTO_DIR}")"; then
  echo "FAIL: moto's S3 server did not start"
  exit 1
fi
export AWS_ENDPOINT_URL_S3
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_ENDPOINT_URL AWS_DEFAULT_REGION SLUICE_S3_PATH_STYLE
: > "${SLUICE_MOTO_DIR}/aws-config"
: > "${SLUICE_MOTO_DIR}/aws-credentials"
export AWS_CONFIG_FILE="${SLUICE_MOTO_DIR}/aws-config"
export AWS_SHARED_CREDENTIALS_FILE="${SLUICE_MOTO_DIR}/aws-credentials"
moto_version="$("${REPO}/scripts/peers/run-python.sh" -c 'import moto; print(moto.__version__)')"
echo "with_moto: moto ${moto_version} S3 at ${AWS_ENDPOINT_URL_S3}"
"$@"
code=$?
echo "with_moto: $1 exited ${code}"
exit "${code}"
