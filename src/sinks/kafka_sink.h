// KafkaSink: writes each micro-batch's rows as Kafka records (Spark's Kafka sink), with
// librdkafka's idempotent producer (docs/kafka.md "Sink").
//
// Columns, by name as Spark's: `value` (required, VARCHAR or BLOB), `key` (optional, VARCHAR or
// BLOB, NULL = no key), `topic` (VARCHAR; required unless the `topic` option is set, which then
// wins), `partition` (optional integer; NULL or absent = the producer's partitioner). Other
// columns are an error naming them and the accepted ones.
//
// Delivery: AddBatch returns only after every record of the batch is acknowledged by the broker
// (acks=all); any delivery failure fails the batch with the broker's error. Guarantee:
// at-least-once, as Spark's Kafka sink — a batch re-run after a crash between the Kafka write and
// commits/<N> writes its records again; within one run the idempotent producer never duplicates
// on retries. Options (`kafka.*`, passed to librdkafka) never appear in errors or descriptions.
//
// Thread safety: driven by one query thread.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "sinks/sink.h"

namespace sluice::sinks {

struct KafkaSinkOptions {
  std::map<std::string, std::string> kafka_config;  // "kafka.*" without the prefix
  std::optional<std::string> topic;                 // the `topic` option
  int64_t delivery_timeout_ms = 120000;
};

// From the user's options: kafka.* (kafka.bootstrap.servers required), topic.
Result<KafkaSinkOptions> ParseKafkaSinkOptions(const std::map<std::string, std::string>& options);

class KafkaSink final : public Sink {
 public:
  static Result<std::unique_ptr<KafkaSink>> Open(engine::Engine* engine, KafkaSinkOptions options);
  ~KafkaSink() override;

  std::string Description() const override;
  Status AddBatch(BatchId batch_id, const engine::Batch& data, OutputMode mode) override;
  std::optional<int64_t> LastNumOutputRows() const override { return last_rows_; }

 private:
  struct Producer;
  KafkaSink(std::unique_ptr<engine::Connection> conn, KafkaSinkOptions options,
            std::unique_ptr<Producer> producer);

  std::unique_ptr<engine::Connection> conn_;
  KafkaSinkOptions options_;
  std::unique_ptr<Producer> producer_;
  std::optional<int64_t> last_rows_;
};

}  // namespace sluice::sinks
