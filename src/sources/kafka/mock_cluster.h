// MockKafkaCluster: librdkafka's in-process mock cluster (rdkafka_mock.h) for tests, with a
// producer. Listens on loopback; stopped when destroyed. Test-only.
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sluice::sources::kafka::testing {

class MockKafkaCluster {
 public:
  explicit MockKafkaCluster(int brokers = 1) {
    char err[256];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "3", err, sizeof(err));
    owner_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    if (!owner_) throw std::runtime_error(err);
    cluster_ = rd_kafka_mock_cluster_new(owner_, brokers);
    if (!cluster_) throw std::runtime_error("rd_kafka_mock_cluster_new failed");
    bootstrap_ = rd_kafka_mock_cluster_bootstraps(cluster_);
    rd_kafka_conf_t* pconf = rd_kafka_conf_new();
    rd_kafka_conf_set(pconf, "bootstrap.servers", bootstrap_.c_str(), err, sizeof(err));
    rd_kafka_conf_set(pconf, "log_level", "3", err, sizeof(err));
    producer_ = rd_kafka_new(RD_KAFKA_PRODUCER, pconf, err, sizeof(err));
    if (!producer_) throw std::runtime_error(err);
  }
  ~MockKafkaCluster() {
    rd_kafka_flush(producer_, 10000);
    rd_kafka_destroy(producer_);
    rd_kafka_mock_cluster_destroy(cluster_);
    rd_kafka_destroy(owner_);
  }
  MockKafkaCluster(const MockKafkaCluster&) = delete;
  MockKafkaCluster& operator=(const MockKafkaCluster&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }

  void CreateTopic(const std::string& topic, int partitions) {
    if (rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, 1) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw std::runtime_error("creating topic " + topic);
    }
  }

  // Produces one record to an explicit partition (key nullopt = NULL key) and waits for it.
  void Produce(const std::string& topic, int partition, std::optional<std::string> key,
               const std::string& value) {
    rd_kafka_resp_err_t err;
    if (key) {
      err = rd_kafka_producev(
          producer_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key->data(), key->size()),
          RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()), RD_KAFKA_V_END);
    } else {
      err = rd_kafka_producev(
          producer_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
          RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()), RD_KAFKA_V_END);
    }
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error(rd_kafka_err2str(err));
  }
  // Produces one record with headers (a nullopt value = a NULL header value).
  void ProduceWithHeaders(
      const std::string& topic, int partition, const std::string& value,
      const std::vector<std::pair<std::string, std::optional<std::string>>>& headers) {
    rd_kafka_headers_t* hdrs = rd_kafka_headers_new(headers.size());
    for (const auto& [name, v] : headers) {
      rd_kafka_header_add(hdrs, name.data(), static_cast<ssize_t>(name.size()),
                          v ? v->data() : nullptr, v ? static_cast<ssize_t>(v->size()) : 0);
    }
    rd_kafka_resp_err_t err =
        rd_kafka_producev(producer_, RD_KAFKA_V_TOPIC(topic.c_str()),
                          RD_KAFKA_V_PARTITION(partition), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                          RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                          RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_headers_destroy(hdrs);  // owned by the message only on success
      throw std::runtime_error(rd_kafka_err2str(err));
    }
  }
  void Flush() {
    if (rd_kafka_flush(producer_, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw std::runtime_error("flush timed out");
    }
  }

 private:
  rd_kafka_t* owner_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  rd_kafka_t* producer_ = nullptr;
  std::string bootstrap_;
};

}  // namespace sluice::sources::kafka::testing
