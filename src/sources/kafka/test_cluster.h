// KafkaTestCluster: the Kafka cluster a test talks to, with a producer. Test-only.
//
// Which cluster: the environment variable SLUICE_KAFKA_BOOTSTRAP chooses.
//   - unset or empty: librdkafka's in-process mock cluster (rdkafka_mock.h) on loopback, stopped
//     when the object is destroyed (`make test`);
//   - set: the real broker it names (scripts/kafka.sh starts one; `make interop` runs the Kafka
//     suites that way, test/interop/kafka). It must be on loopback (127.0.0.1 or localhost),
//     because the constructor deletes every topic on it that is not internal ("__..."), so that
//     each test starts on an empty cluster as it does with the mock.
// Tests stay the same on both: topics are created (and, on the real broker, awaited until every
// partition has a leader) before they are used.
//
// Errors throw std::runtime_error naming what failed (these are test fixtures).
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sluice::sources::kafka::testing {

// The value of SLUICE_KAFKA_BOOTSTRAP, or "" when unset (the mock).
std::string RealKafkaBootstrap();

class KafkaTestCluster {
 public:
  // `brokers`: the mock cluster's size (a real broker is what it is).
  explicit KafkaTestCluster(int brokers = 1);
  ~KafkaTestCluster();
  KafkaTestCluster(const KafkaTestCluster&) = delete;
  KafkaTestCluster& operator=(const KafkaTestCluster&) = delete;

  // True on the real broker of SLUICE_KAFKA_BOOTSTRAP.
  bool real() const { return cluster_ == nullptr; }
  const std::string& bootstrap() const { return bootstrap_; }

  // Creates `topic` with `partitions` partitions (replication factor 1) and topic `config`
  // (e.g. retention.ms; the mock ignores topic configs). Waits until it can be produced to.
  void CreateTopic(const std::string& topic, int partitions,
                   const std::map<std::string, std::string>& config = {});
  // Deletes `topic` and waits until the cluster no longer lists it. Real broker only (the mock
  // of this librdkafka cannot delete topics).
  void DeleteTopic(const std::string& topic);
  // CreatePartitions: grows `topic` to `total` partitions and waits until they all have a leader.
  // Real broker only (the mock of this librdkafka cannot add partitions).
  void AddPartitions(const std::string& topic, int total);
  // DeleteRecords: moves the partition's earliest offset up to `before` (what retention does).
  void DeleteRecordsBefore(const std::string& topic, int partition, int64_t before);
  // The partition's earliest available offset and high watermark.
  std::pair<int64_t, int64_t> Watermarks(const std::string& topic, int partition);

  // Produces one record to an explicit partition (key nullopt = NULL key); Flush waits for it.
  void Produce(const std::string& topic, int partition, std::optional<std::string> key,
               const std::string& value);
  // Produces one record with headers (a nullopt value = a NULL header value).
  void ProduceWithHeaders(
      const std::string& topic, int partition, const std::string& value,
      const std::vector<std::pair<std::string, std::optional<std::string>>>& headers);
  // Waits (up to 30 s) until every produced record is acknowledged; fails when one was not.
  void Flush();

  // The mock only (fails on the real broker): counts the requests clients send to the cluster
  // from now on; CountRequests gives how many of them had `api_key` (2 ListOffsets, 3 Metadata).
  void TrackRequests();
  size_t CountRequests(int16_t api_key);
  // The mock only: the next requests with `api_key` get `errors`, one request each, in order
  // (every partition of a request gets its error).
  void PushRequestErrors(int16_t api_key, const std::vector<rd_kafka_resp_err_t>& errors);

  // The mock only (each fails on the real broker), for fault tests: the network between the
  // clients and the cluster, and where partitions live.
  // SetBrokersDown: every broker closes its connections and refuses new ones (a network cut:
  // no leader changes); SetBrokersUp accepts them again.
  void SetBrokersDown();
  void SetBrokersUp();
  // Moves the leader of `topic`'s `partition` to broker `broker_id` (1..brokers, as the mock
  // numbers them); clients learn it from NOT_LEADER answers and the next Metadata.
  void SetPartitionLeader(const std::string& topic, int partition, int32_t broker_id);
  // Delays every broker's answers by `rtt_ms` (0: none).
  void SetRoundTripMs(int rtt_ms);

 private:
  // The non-internal topics the cluster lists, with their partition counts.
  std::map<std::string, int> ListTopics();
  // Waits (up to 30 s) until `topic` is listed with `partitions` partitions that all have a
  // leader (partitions 0: until it is not listed).
  void AwaitTopic(const std::string& topic, int partitions);
  void DeleteTopics(const std::vector<std::string>& topics);

  rd_kafka_t* owner_ = nullptr;  // the mock cluster's handle (mock only)
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  rd_kafka_t* producer_ = nullptr;  // also the admin client
  std::string bootstrap_;
  std::string delivery_error_;  // the last failed delivery since Flush (OnDelivery)
};

}  // namespace sluice::sources::kafka::testing
