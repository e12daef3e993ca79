// KafkaSink: writes each micro-batch's rows as Kafka records (Spark's Kafka sink), with
// librdkafka's idempotent producer (docs/kafka.md "Sink").
//
// Columns, by name as Spark's: `value` (required, VARCHAR or BLOB), `key` (optional, VARCHAR or
// BLOB, NULL = no key), `topic` (VARCHAR; required unless the `topic` option is set, which then
// wins), `partition` (optional integer; NULL or absent = the producer's partitioner), `headers`
// (optional, a list of STRUCT(key VARCHAR, value BLOB or VARCHAR); see below). Other columns are
// an error naming them and the accepted ones.
//
// Delivery: AddBatch returns only after every record of the batch is acknowledged by the broker
// (acks=all); any delivery failure fails the batch with the broker's error. Guarantee:
// at-least-once, as Spark's Kafka sink — a batch re-run after a crash between the Kafka write and
// commits/<N> writes its records again; within one run the idempotent producer never duplicates
// on retries. Options (`kafka.*`, passed to librdkafka) never appear in errors or descriptions.
//
// Exactly-once (option `kafka.transactional.id`): each batch is one Kafka transaction that also
// writes a marker record (key = the transactional.id, value = the batch id in decimal) to
// partition 0 of the marker topic (option `transactionMarkerTopic`, default
// `sluice-transaction-markers`; create it with one partition and cleanup.policy=compact, or let the
// broker auto-create it). Opening the sink calls init_transactions, which fences an older producer
// with the same transactional.id and aborts its open transaction (a batch cut short by a crash
// leaves only aborted records), then reads the marker partition with isolation.level =
// read_committed: the last marker with this id is the last batch committed to Kafka. A batch whose
// id is not above it (a re-run after a crash between the Kafka commit and commits/<N>) is skipped.
// Readers see each batch once with isolation.level = read_committed (librdkafka's default).
// One transactional.id per checkpoint: a new checkpoint (batch ids from 0 again) needs a new one,
// and Open refuses an id whose markers are ahead of checkpoint_last_planned_batch. A cluster that
// cannot be reached at all (nothing listening at any bootstrap server) fails Open at once, naming
// kafka.bootstrap.servers; one reached once is waited for up to the delivery timeout.
//
// Headers (column `headers`, Spark's ARRAY<STRUCT<key STRING, value BINARY>>): each element is a
// record header in order (repeated keys kept); a NULL value is a header without a value; a NULL
// or empty list writes none. A NULL element or key is an error naming the row's column.
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
  std::optional<std::string> transactional_id;              // kafka.transactional.id: exactly-once
  std::string marker_topic = "sluice-transaction-markers";  // transactionMarkerTopic
  // Exactly-once mode: the last batch id the query's checkpoint has planned (its latest
  // offsets/<N>; -1 for a new checkpoint), set by the query's sink factory. When set, Open
  // refuses a transactional.id whose markers are ahead of it (batches committed to Kafka that this
  // checkpoint never planned: the id was used by another checkpoint), which would otherwise skip
  // the checkpoint's first batches silently. nullopt: not checked (tests of the sink alone).
  std::optional<int64_t> checkpoint_last_planned_batch;
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

  // Exactly-once mode: the first batch id not committed to Kafka (0 when none is), as read from
  // the marker topic when the sink was opened and advanced by each commit since.
  std::optional<int64_t> NextUncommittedBatch() const;

 private:
  struct Producer;
  // Produces the batch's records (inside the transaction in exactly-once mode); the count.
  Result<int64_t> ProduceRecords(const std::string& ctx, const engine::Batch& data);
  Status CommitTransaction(const std::string& ctx, BatchId batch_id);
  // Reads the marker partition: the batch after the last one this transactional.id committed.
  Result<int64_t> ReadMarkers();
  KafkaSink(std::unique_ptr<engine::Connection> conn, KafkaSinkOptions options,
            std::unique_ptr<Producer> producer);

  std::unique_ptr<engine::Connection> conn_;
  KafkaSinkOptions options_;
  std::unique_ptr<Producer> producer_;
  // Exactly-once mode: the first batch id not yet committed to Kafka.
  std::optional<int64_t> next_uncommitted_;
  std::optional<int64_t> last_rows_;
};

}  // namespace sluice::sinks
