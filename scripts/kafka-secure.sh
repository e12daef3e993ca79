#!/usr/bin/env bash
# A real Apache Kafka broker with authentication, for the Kafka authentication interop tests
# (test/interop/kafka_auth): one KRaft node (broker and controller) on 127.0.0.1, with the jars
# that scripts/peers/kafka-jars.sh installed (`make peers`).
#
#   kafka-secure.sh start DIR   makes DIR (it must not exist or be empty), generates a CA and
#                               the broker's and a client's certificates there with openssl,
#                               formats the log dir with the SCRAM users, starts the broker in the
#                               background and waits (up to 180 s) until it serves; then writes
#                               DIR/broker.env (below). Exits 1 naming the cause (and printing the
#                               broker log's tail) when it cannot.
#   kafka-secure.sh stop DIR    stops the broker started in DIR (SIGTERM, then SIGKILL after 30 s);
#                               does nothing when none runs.
#
# Listeners (free ports picked at start), all on 127.0.0.1:
#   INTERNAL        PLAINTEXT       inter-broker traffic and test setup (no authentication)
#   SASL_SSL        SASL_SSL        PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
#   SASL_PLAINTEXT  SASL_PLAINTEXT  PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER (unsecured JWT)
#   SSL             SSL             server authentication only
#   MTLS            SSL             client certificate required (ssl.client.auth=required)
#   NOHOST          SSL             a certificate whose names do not match 127.0.0.1 (for
#                                   ssl.endpoint.identification.algorithm)
#   CONTROLLER      PLAINTEXT       KRaft controller (not advertised)
# Users (SCRAM-SHA-256 and SCRAM-SHA-512 credentials made at format time, and PLAIN):
#   alice / alice-secret-1, bob / bob-secret-2.
# The broker's certificate has the SANs IP:127.0.0.1 and DNS:localhost.
#
# DIR/broker.env (KEY=VALUE lines, sourceable): INTERNAL, SASL_SSL, SASL_PLAINTEXT, SSL, MTLS,
# NOHOST (host:port each), CA_PEM (the CA certificate), CA_P12 (a PKCS#12 truststore made with keytool,
# password TRUSTSTORE_PASSWORD), CA_JKS (the same as a JKS store, for the refusal test),
# CLIENT_CERT_PEM, CLIENT_KEY_PEM (the client's certificate and unencrypted key), CLIENT_PEM (both
# in one file, a Java PEM keystore), CLIENT_P12 (both as a PKCS#12 keystore, password
# KEYSTORE_PASSWORD), USERS ("alice:alice-secret-1 bob:...").
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/peers/common.sh"

usage() { echo "usage: kafka-secure.sh start|stop DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
cmd="$1"
dir="$2"

stop_broker() {
  local pidfile="${dir}/broker.pid" pid i
  [[ -f "${pidfile}" ]] || return 0
  pid="$(cat "${pidfile}")"
  if kill -0 "${pid}" 2>/dev/null; then
    kill -TERM "${pid}" 2>/dev/null || true
    for ((i = 0; i < 300; i++)); do
      kill -0 "${pid}" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "${pid}" 2>/dev/null; then
      echo "kafka-secure: the broker (pid ${pid}) did not stop in 30 s: SIGKILL" >&2
      kill -KILL "${pid}" 2>/dev/null || true
    fi
  fi
  rm -f "${pidfile}"
}

if [[ "${cmd}" == "stop" ]]; then
  stop_broker
  exit 0
fi
[[ "${cmd}" == "start" ]] || usage

"$(dirname "${BASH_SOURCE[0]}")/peers/kafka-jars.sh" --check
command -v java >/dev/null || { echo "kafka-secure: java is needed to run the broker" >&2; exit 1; }
command -v keytool >/dev/null || { echo "kafka-secure: keytool (the JDK's) is needed" >&2; exit 1; }
command -v openssl >/dev/null || { echo "kafka-secure: openssl is needed" >&2; exit 1; }
if [[ -e "${dir}" && -n "$(ls -A "${dir}")" ]]; then
  echo "kafka-secure: ${dir} is not empty" >&2
  exit 1
fi
mkdir -p "${dir}"
dir="$(cd "${dir}" && pwd)"
certs="${dir}/certs"
mkdir -p "${certs}" "${dir}/logs"

# --- Certificates --------------------------------------------------------------------------------
store_pass="store-pass-7"
trust_pass="trust-pass-8"
(
  cd "${certs}"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Sluice test CA" \
    -keyout ca.key -out ca.pem 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout broker.key \
    -out broker.csr 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' > broker.ext
  openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
    -extfile broker.ext -out broker.pem 2>/dev/null
  openssl pkcs12 -export -in broker.pem -inkey broker.key -certfile ca.pem -name broker \
    -passout "pass:${store_pass}" -out broker.p12
  printf 'subjectAltName=DNS:broker.invalid\nextendedKeyUsage=serverAuth\n' > nohost.ext
  openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
    -extfile nohost.ext -out nohost.pem 2>/dev/null
  openssl pkcs12 -export -in nohost.pem -inkey broker.key -certfile ca.pem -name broker \
    -passout "pass:${store_pass}" -out nohost.p12
  openssl req -newkey rsa:2048 -nodes -subj "/CN=sluice-client" -keyout client.key \
    -out client.csr 2>/dev/null
  printf 'extendedKeyUsage=clientAuth\n' > client.ext
  openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
    -extfile client.ext -out client.pem 2>/dev/null
  openssl pkcs12 -export -in client.pem -inkey client.key -certfile ca.pem -name client \
    -passout "pass:${store_pass}" -out client.p12
  cat client.key client.pem > client-keystore.pem
  # Truststores as a Java user has them: made by keytool.
  keytool -importcert -noprompt -alias ca -file ca.pem -keystore truststore.p12 \
    -storetype PKCS12 -storepass "${trust_pass}" >/dev/null 2>&1
  keytool -importcert -noprompt -alias ca -file ca.pem -keystore truststore.jks \
    -storetype JKS -storepass "${trust_pass}" >/dev/null 2>&1
  rm -f ./*.csr ./*.ext ./*.srl
)

# --- Ports ---------------------------------------------------------------------------------------
read -r p_internal p_sasl_ssl p_sasl_plain p_ssl p_mtls p_nohost p_controller < <(
  python3 - <<'EOF'
import socket
socks = []
for _ in range(7):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
)

# --- Configuration -------------------------------------------------------------------------------
plain_users='user_alice="alice-secret-1" user_bob="bob-secret-2"'
scram='org.apache.kafka.common.security.scram.ScramLoginModule required;'
cat > "${dir}/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:${p_controller}
controller.listener.names=CONTROLLER
listeners=INTERNAL://127.0.0.1:${p_internal},SASL_SSL://127.0.0.1:${p_sasl_ssl},SASL_PLAINTEXT://127.0.0.1:${p_sasl_plain},SSL://127.0.0.1:${p_ssl},MTLS://127.0.0.1:${p_mtls},NOHOST://127.0.0.1:${p_nohost},CONTROLLER://127.0.0.1:${p_controller}
advertised.listeners=INTERNAL://127.0.0.1:${p_internal},SASL_SSL://127.0.0.1:${p_sasl_ssl},SASL_PLAINTEXT://127.0.0.1:${p_sasl_plain},SSL://127.0.0.1:${p_ssl},MTLS://127.0.0.1:${p_mtls},NOHOST://127.0.0.1:${p_nohost}
listener.security.protocol.map=INTERNAL:PLAINTEXT,SASL_SSL:SASL_SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL,MTLS:SSL,NOHOST:SSL,CONTROLLER:PLAINTEXT
inter.broker.listener.name=INTERNAL
log.dirs=${dir}/data
num.partitions=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
ssl.keystore.type=PKCS12
ssl.keystore.location=${certs}/broker.p12
ssl.keystore.password=${store_pass}
ssl.truststore.type=PEM
ssl.truststore.location=${certs}/ca.pem
listener.name.mtls.ssl.client.auth=required
listener.name.nohost.ssl.keystore.type=PKCS12
listener.name.nohost.ssl.keystore.location=${certs}/nohost.p12
listener.name.nohost.ssl.keystore.password=${store_pass}
listener.name.sasl_ssl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required ${plain_users};
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=${scram}
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=${scram}
listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required ${plain_users};
listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=${scram}
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=${scram}
listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="broker";
EOF
cat > "${dir}/log4j2.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${dir}/logs/broker.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.org.name = org.apache.kafka
logger.org.level = INFO
EOF

jvm=(java -Xms128m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true
  "-Dlog4j2.configurationFile=${dir}/log4j2.properties" -cp "${SLUICE_JARS}/kafka/*")

# --- Format with the SCRAM users, start ----------------------------------------------------------
scram_args=()
for user in alice:alice-secret-1 bob:bob-secret-2; do
  for mech in SCRAM-SHA-256 SCRAM-SHA-512; do
    scram_args+=(--add-scram "${mech}=[name=\"${user%%:*}\",password=\"${user#*:}\"]")
  done
done
if ! "${jvm[@]}" kafka.tools.StorageTool format -t "$(python3 -c \
  'import uuid,base64;print(base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("="))')" \
  -c "${dir}/server.properties" "${scram_args[@]}" > "${dir}/logs/format.log" 2>&1; then
  echo "kafka-secure: formatting the log dir failed:" >&2
  tail -n 30 "${dir}/logs/format.log" >&2
  exit 1
fi
"${jvm[@]}" kafka.Kafka "${dir}/server.properties" > "${dir}/logs/stdout.log" 2>&1 &
pid=$!
echo "${pid}" > "${dir}/broker.pid"

ready=0
for ((i = 0; i < 360; i++)); do
  if ! kill -0 "${pid}" 2>/dev/null; then break; fi
  if grep -q "Kafka Server started" "${dir}/logs/broker.log" 2>/dev/null; then
    ready=1
    break
  fi
  sleep 0.5
done
if ((ready == 0)); then
  echo "kafka-secure: the broker did not start in 180 s (log ${dir}/logs):" >&2
  tail -n 40 "${dir}/logs/broker.log" "${dir}/logs/stdout.log" >&2 2>/dev/null || true
  stop_broker
  exit 1
fi

cat > "${dir}/broker.env" <<EOF
INTERNAL=127.0.0.1:${p_internal}
SASL_SSL=127.0.0.1:${p_sasl_ssl}
SASL_PLAINTEXT=127.0.0.1:${p_sasl_plain}
SSL=127.0.0.1:${p_ssl}
MTLS=127.0.0.1:${p_mtls}
NOHOST=127.0.0.1:${p_nohost}
CA_PEM=${certs}/ca.pem
CA_P12=${certs}/truststore.p12
CA_JKS=${certs}/truststore.jks
TRUSTSTORE_PASSWORD=${trust_pass}
CLIENT_CERT_PEM=${certs}/client.pem
CLIENT_KEY_PEM=${certs}/client.key
CLIENT_PEM=${certs}/client-keystore.pem
CLIENT_P12=${certs}/client.p12
KEYSTORE_PASSWORD=${store_pass}
USERS="alice:alice-secret-1 bob:bob-secret-2"
EOF
echo "kafka-secure: broker ${pid} ready in ${dir} (SASL_SSL 127.0.0.1:${p_sasl_ssl})"
