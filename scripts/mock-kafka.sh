# Shell helpers for librdkafka's mock Kafka cluster as a process (sluice_mock_kafka), sourced by
# the Kafka shell tests and examples/orders/run.sh. With SLUICE_KAFKA_BOOTSTRAP set (a real test
# broker on loopback, test/interop/kafka/with_broker.sh) sluice_mock_kafka stands for that broker
# instead: it deletes the broker's topics, creates the named ones and writes its address, so the
# same tests run against the real broker.
#
#   start_mock_kafka <sluice_mock_kafka binary> <topic:partitions>...
#       starts the cluster in the background in the current directory, waits (up to 30 s) for it
#       to write its bootstrap servers, and sets KAFKA_BOOTSTRAP and MOCK_KAFKA_PID; returns 1
#       after printing its log when it does not come up.
#   stop_mock_kafka
#       stops it; does nothing when none was started.

MOCK_KAFKA_PID=""
KAFKA_BOOTSTRAP=""

start_mock_kafka() {
  local mock="$1" i
  shift
  "${mock}" mock-kafka-bootstrap.txt "$@" > mock-kafka.log 2>&1 &
  MOCK_KAFKA_PID=$!
  for ((i = 0; i < 300; i++)); do
    [[ -s mock-kafka-bootstrap.txt ]] && break
    kill -0 "${MOCK_KAFKA_PID}" 2> /dev/null || break
    sleep 0.1
  done
  if [[ ! -s mock-kafka-bootstrap.txt ]]; then
    echo "the mock Kafka cluster did not start:"
    cat mock-kafka.log
    return 1
  fi
  KAFKA_BOOTSTRAP="$(cat mock-kafka-bootstrap.txt)"
}

stop_mock_kafka() {
  if [[ -n "${MOCK_KAFKA_PID}" ]]; then
    kill "${MOCK_KAFKA_PID}" 2> /dev/null && wait "${MOCK_KAFKA_PID}" 2> /dev/null
    MOCK_KAFKA_PID=""
  fi
}
