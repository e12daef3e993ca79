#!/usr/bin/env bash
# deploy/kubernetes/ run as its pods would run, without a cluster (docs/scale-out.md,
# "Kubernetes"): the manifests are read by Kubernetes' own API types (deploy/kubernetes/check,
# built by `make peers`), which also prints each pod's args and env as the kubelet expands them;
# each pod is then a process with exactly those args and env (env -i), its ConfigMap and emptyDir
# volumes as directories. The one edit: the pipeline's broker address 'kafka:9092' becomes the test
# broker's; the S3 endpoint is moto's (AWS_ENDPOINT_URL_S3, as the manifest's comment says for an
# S3-compatible store).
#   1. the three pods (replicas: 3) share the topic's 6 partitions; records arrive;
#   2. a rolling restart of pod 1 (SIGTERM: exit 0, then the same pod name again within
#      kafka.session.timeout.ms): static membership gives it the same partitions back, and the
#      other pods see no rebalance;
#   3. a scale-down to 2 (pod 2 stopped with SIGTERM for good): after the session timeout the two
#      others own every partition;
#   4. the table holds every record exactly once; SIGTERM stops the pods with exit code 0.
#
# Run by test/interop/kafka/with_broker.sh then test/interop/s3/with_moto.sh.
# Usage: kubernetes_statefulset.sh <sluice> <sluice_mock_kafka>
set -uo pipefail
SLUICE="$(realpath "$1")"
MOCK="$(realpath "$2")"
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../../scripts/peers/common.sh
source "${HERE}/../../../scripts/peers/common.sh"
CHECK="${SLUICE_CACHE}/bin/kubernetes-check"
DEPLOY="${HERE}/../../../deploy/kubernetes"
fail() { echo "FAIL: $*"; exit 1; }
[[ -n "${SLUICE_KAFKA_BOOTSTRAP:-}" ]] || fail "run me through test/interop/kafka/with_broker.sh"
[[ -n "${AWS_ENDPOINT_URL_S3:-}" ]] || fail "run me through test/interop/s3/with_moto.sh"
[[ -x "${CHECK}" ]] || fail "${CHECK} is missing: run \`make peers\` (scripts/peers/kubernetes-check.sh)"
command -v kcat > /dev/null || fail "kcat is not installed (apt install kcat)"
WORK="$(mktemp -d)"
# shellcheck source=../../../scripts/mock-kafka.sh
source "${HERE}/../../../scripts/mock-kafka.sh"
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    kill -9 "${pid}" 2> /dev/null
    wait "${pid}" 2> /dev/null
  done
  stop_mock_kafka
  rm -rf "${WORK}"
}
trap cleanup EXIT
cd "${WORK}"
PARTITIONS=6

# The manifests, read as Kubernetes reads them.
"${CHECK}" "${DEPLOY}/statefulset.yaml" "${DEPLOY}/pipeline-configmap.yaml" \
  "${DEPLOY}/s3-secret.example.yaml" > pods.json 2> check.err ||
  { cat check.err; fail "deploy/kubernetes/check refused the manifests"; }
[[ "$(python3 -c 'import json; print(len(json.load(open("pods.json"))["pods"]))')" == 3 ]] ||
  fail "the StatefulSet does not have 3 replicas: $(cat pods.json)"
echo "ok: the manifests decode strictly as Kubernetes' types; 3 pods"

# pod_launcher INDEX LETTER: writes LETTER.sh, the pod's process: its volumes as directories
# under pods/LETTER/, its env only (env -i) and its args, with the mount paths moved there.
pod_launcher() {
  python3 - "$1" "$2" "${SLUICE}" "${SLUICE_KAFKA_BOOTSTRAP}" << 'PY'
import json, os, shlex, sys
index, letter, sluice, bootstrap = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
pod = json.load(open("pods.json"))["pods"][index]
root = os.path.abspath(os.path.join("pods", letter))
moves = {}
for m in pod["mounts"]:
    local = root + m["path"]
    os.makedirs(local, exist_ok=True)
    moves[m["path"]] = local
    for name, text in (m.get("configMap") or {}).items():
        if "'kafka:9092'" in text:
            text = text.replace("'kafka:9092'", "'" + bootstrap + "'")
        with open(os.path.join(local, name), "w") as f:
            f.write(text)
def moved(value):
    for path, local in moves.items():
        if value == path or value.startswith(path + "/"):
            return local + value[len(path):]
    return value
os.makedirs(root + "/tmp", exist_ok=True)
env = {k: moved(v) for k, v in pod["env"].items()}
env.update(PATH=os.environ["PATH"], HOME=root, TMPDIR=root + "/tmp")
for k in ("AWS_ENDPOINT_URL_S3", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
    env[k] = os.environ[k]
args = pod["args"]
assert args[0] == "run", args
with open(letter + ".sh", "w") as f:
    f.write("exec env -i " + " ".join(shlex.quote(k + "=" + v) for k, v in sorted(env.items()))
            + " " + shlex.quote(sluice) + " " + " ".join(shlex.quote(moved(a)) for a in args) + "\n")
PY
}
LETTERS=(a b c)
for i in 0 1 2; do pod_launcher "${i}" "${LETTERS[i]}" || fail "could not lay out pod ${i}"; done
grep -q -- '--group-instance-id sluice-orders-1' b.sh || fail "pod 1's args: $(cat b.sh)"
WH="$(python3 -c 'import json; print(json.load(open("pods.json"))["pods"][0]["env"]["SLUICE_WAREHOUSE"])')"
BUCKET="${WH#s3://}"
BUCKET="${BUCKET%%/*}"
curl -sf -X PUT "${AWS_ENDPOINT_URL_S3}/${BUCKET}" > /dev/null || fail "could not create bucket ${BUCKET}"
start_mock_kafka "${MOCK}" "orders:${PARTITIONS}" || fail "could not create the topic"

# shellcheck source=group_test_lib.sh
source "${HERE}/group_test_lib.sh"
# produce writes topic events: this test's topic is the manifest's, orders.
produce_orders() {
  local p id
  for ((p = 0; p < PARTITIONS; p++)); do
    for ((id = $1; id <= $2; id++)); do
      if ((id % PARTITIONS == p)); then echo "{\"id\": ${id}}"; fi
    done | kcat -P -b "${KAFKA_BOOTSTRAP}" -t orders -p "${p}" 2>> kcat.log ||
      { cat kcat.log; fail "kcat could not produce"; }
  done
}
table() {
  SLUICE_LOCAL_CACHE_DIR="${WORK}/cache-sql" "${SLUICE}" sql --warehouse "${WH}" --format csv \
    "SELECT count(*) || ',' || count(DISTINCT id) || ',' || coalesce(min(id), -1) || ',' || coalesce(max(id), -1)
     FROM (SELECT id::INT AS id FROM orders_raw)" 2> /dev/null | tail -n 1 | tr -d '\r"'
}
start() {  # start LETTER: the pod's process, its log LETTER.log
  bash "$1.sh" >> "$1.log" 2>&1 &
  PIDS+=($!)
  eval "PID_$1=$!"
}
stop() {  # stop LETTER: SIGTERM, as the kubelet stops a pod; it must exit 0
  local pid code
  pid="$(eval echo "\${PID_$1}")"
  kill -TERM "${pid}"
  wait "${pid}"
  code=$?
  [[ ${code} -eq 0 ]] || { dump_logs; fail "pod $1 exited ${code} on SIGTERM"; }
}
all_owned_by() {
  local n seen="" o
  for n in "$@"; do
    o="$(owned "$n")"
    [[ -n "${o}" && "${o}" != none ]] && seen="${seen}${seen:+, }${o}"
  done
  [[ "$(echo "${seen}" | tr ',' '\n' | tr -d ' ' | sort -n | tr '\n' ' ')" == "0 1 2 3 4 5 " ]]
}
ownership_lines() { grep -c 'owned now' "$1.log"; }

# 1. Three pods share the partitions.
produce_orders 0 599
start a
start b
start c
each_owns_some() { local n; for n in "$@"; do owns_some "$n" || return 1; done; }
wait_for 90 "the three pods did not share the partitions" each_owns_some a b c
wait_for 60 "the three pods do not own every partition once" all_owned_by a b c
echo "ok: the pods share the partitions: 0 owns $(owned a), 1 $(owned b), 2 $(owned c)"
wait_for 120 "the table is not 600 records once" table_is "600,600,0,599"
echo "ok: 600 records once"

# 2. A rolling restart of pod 1: static membership keeps its partitions, no rebalance.
b_before="$(owned b)"
a_lines="$(ownership_lines a)"
c_lines="$(ownership_lines c)"
stop b
produce_orders 600 899
start b
wait_for 60 "the restarted pod 1 owns nothing" owns_some b
[[ "$(owned b)" == "${b_before}" ]] ||
  { dump_logs; fail "the restarted pod 1 owns $(owned b), before the restart ${b_before}"; }
wait_for 120 "the table is not 900 records once" table_is "900,900,0,899"
[[ "$(ownership_lines a)" == "${a_lines}" && "$(ownership_lines c)" == "${c_lines}" ]] ||
  { dump_logs; fail "pods 0 and 2 saw a rebalance when pod 1 restarted"; }
echo "ok: pod 1 restarted with its partitions (${b_before}); pods 0 and 2 saw no rebalance; 900 records once"

# 3. Scale down to 2: pod 2 stops for good; after the session timeout 0 and 1 own everything.
c_owned="$(owned c)"
stop c
produce_orders 900 1199
wait_for 120 "pods 0 and 1 were not given pod 2's partitions (${c_owned})" all_owned_by a b
echo "ok: after the scale-down pod 0 owns $(owned a), pod 1 $(owned b)"

# 4. Every record once; the remaining pods stop with exit code 0.
wait_for 120 "the table is not 1200 records once" table_is "1200,1200,0,1199"
echo "ok: the table holds every record once: 1200"
stop a
stop b
PIDS=()
echo "PASS"
