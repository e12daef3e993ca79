// KafkaSource: Spark's Kafka source (KafkaMicroBatchStream) as a sources::Source, on librdkafka
// (docs/kafka.md). `ReadStream().Format("kafka")`, options with Spark's names.
//
// Offsets: {"topic":{"0":23,"1":7}}, the next offset to read per partition. A batch (start, end]
// reads, for every partition, the records at offsets [start, end) — exactly those, in partition
// then offset order, also when a batch is re-run after a crash (KafkaClient::ReadRanges never
// delivers a record outside the ranges; what it prefetched past `end` serves the next batch).
//
// Rows: key BLOB, value BLOB, topic VARCHAR, partition INTEGER, offset BIGINT,
// timestamp TIMESTAMP WITH TIME ZONE, timestampType INTEGER, and with includeHeaders
// headers STRUCT(key VARCHAR, value BLOB)[] (NULL for a record without headers, as Spark).
//
// Thread safety: as every Source, driven by one thread.
#pragma once

#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>

#include "engine/batch_builder.h"
#include "sources/kafka/kafka_client.h"
#include "sources/kafka/kafka_offsets.h"
#include "sources/source.h"

namespace sluice::sources::kafka {

struct KafkaSourceOptions {
  std::map<std::string, std::string> kafka_config;  // "kafka.*" without the prefix
  // Exactly one of the three.
  std::vector<std::string> subscribe;
  std::optional<std::string> subscribe_pattern;
  std::set<TopicPartition> assign;
  // nullopt = latest. Values may be kEarliest / kLatest.
  std::optional<PartitionOffsets> starting_offsets;
  bool starting_earliest = false;
  std::optional<int64_t> max_offsets_per_trigger;
  // Spark's minOffsetsPerTrigger / maxTriggerDelay: a batch is delayed (LatestOffset returns its
  // start) while fewer new offsets than the minimum are available and less than the delay has
  // passed since the last batch was triggered (or since the source was opened).
  std::optional<int64_t> min_offsets_per_trigger;
  int64_t max_trigger_delay_ms = 15 * 60 * 1000;
  bool fail_on_data_loss = true;
  std::string group_id_prefix = "spark-kafka-source";
  int64_t poll_timeout_ms = 120000;
  bool include_headers = false;
  // partitionedBy: the column the producer keyed the topic's records by (docs/scale-out.md "Keyed
  // state and partitioning"). The source only records it; group mode (scaleout/) checks each
  // record's key against it and runs a query keeping state by that column per partition.
  std::optional<std::string> partitioned_by;
};

// Parses the user's options (SourceContext::options). InvalidArgument naming the option.
Result<KafkaSourceOptions> ParseKafkaSourceOptions(const std::map<std::string, std::string>& opts);

// Option names that hold secrets: common/redaction.h IsSecretOptionName (the one rule).
bool IsSecretOption(std::string_view name);

class KafkaSource final : public Source {
 public:
  static Result<std::unique_ptr<KafkaSource>> Open(const SourceContext& ctx,
                                                   KafkaSourceOptions options);

  std::string Description() const override { return DescriptionOf(options_); }
  // Spark's description of a Kafka source with these options (KafkaV2[Subscribe[orders]]),
  // without opening it: no option value (and so no secret) appears in it.
  static std::string DescriptionOf(const KafkaSourceOptions& options);
  const engine::Schema& schema() const override { return schema_; }
  Result<std::optional<OffsetJson>> LatestOffset(const std::optional<OffsetJson>& start,
                                                 const ReadLimit& limit) override;
  Status PrepareForAvailableNow() override;
  Result<engine::Batch> GetBatch(const std::optional<OffsetJson>& start,
                                 const OffsetJson& end) override;
  std::map<std::string, std::string> Metrics(
      const std::optional<OffsetJson>& latest) const override;
  // Ends a wait for the brokers or for records (KafkaClient::Interrupt).
  void Interrupt() override { client_->Interrupt(); }

  // The schema of a Kafka source's rows (with the headers column when `include_headers`).
  static engine::Schema RowSchema(bool include_headers = false);

  // A batch (non-streaming) read, Spark's `spark.read.format("kafka")`: the records from
  // `startingOffsets` (default earliest) up to `endingOffsets` (default latest: the high
  // watermarks when the read starts; JSON per partition with -1 = latest), in partition then
  // offset order. `ctx.options` are the source options plus endingOffsets; streaming-only
  // options (maxOffsetsPerTrigger, minOffsetsPerTrigger, maxTriggerDelay) are refused, as are
  // startingOffsets = latest and endingOffsets = earliest (Spark's rules). ctx.checkpoint_dir is
  // ignored: nothing is persisted.
  static Result<engine::Batch> ReadBatch(const SourceContext& ctx);

  // A header key's text as Spark's Kafka source shows it: Kafka's Java clients decode the key
  // with new String(bytes, UTF_8), so bytes that are not UTF-8 become U+FFFD by the JDK's rule
  // (a truncated or malformed sequence is one U+FFFD, or one per byte where the JDK says so;
  // an encoded surrogate is one). Valid UTF-8 is returned unchanged.
  static std::string HeaderKeyText(std::string_view bytes);

 private:
  KafkaSource(const SourceContext& ctx, KafkaSourceOptions options,
              std::unique_ptr<KafkaClient> client);
  // The partitions the options select, as the cluster has them now.
  Result<std::set<TopicPartition>> CurrentPartitions();
  // High watermark of every current partition (one batched request, KafkaClient::ListOffsets).
  Result<PartitionOffsets> FetchLatest();
  // The earliest available offset of each of `partitions` that exists (one batched request).
  Result<PartitionOffsets> FetchEarliest(const std::set<TopicPartition>& partitions);
  // `tp`'s entry of a FetchEarliest answer; NotFound when the partition does not exist.
  Result<int64_t> EarliestOf(const PartitionOffsets& earliest, const TopicPartition& tp) const;
  // Where the first batch starts: startingOffsets resolved against the cluster.
  Result<PartitionOffsets> InitialOffsets(const PartitionOffsets& latest);
  // Data loss (a range starting below the earliest available offset, or a partition of `start`
  // that is gone): an error when failOnDataLoss, else a warning and the readable part.
  Status ReportDataLoss(const std::string& message);
  // includeHeaders: the builder's encoded form of a record's headers, and its decoding into
  // the nested `headers` column (see headers_conn_).
  static void EncodeHeaders(const std::vector<KafkaHeader>& headers, std::string* out);
  Result<engine::Batch> DecodeHeaders(const engine::Batch& rows);
  // minOffsetsPerTrigger: true when the batch from `from` to `until` must wait (Spark's
  // delayBatch); otherwise records now as the last trigger time.
  bool DelayBatch(const PartitionOffsets& from, const PartitionOffsets& until);

  SourceContext ctx_;
  KafkaSourceOptions options_;
  std::unique_ptr<KafkaClient> client_;
  engine::Schema schema_;
  // includeHeaders: rows are built with the headers hex-encoded in a VARCHAR column and turned
  // into the nested column by one SQL projection on this connection (BatchBuilder has no nested
  // values).
  std::unique_ptr<engine::Connection> headers_conn_;
  // Builds every batch's rows (created on the first GetBatch; empty between calls).
  std::unique_ptr<engine::BatchBuilder> builder_;
  std::optional<std::regex> pattern_;
  std::optional<PartitionOffsets> available_now_end_;  // set by PrepareForAvailableNow
  PartitionOffsets last_latest_;                       // high watermarks seen last
  // Key + value bytes and records of the last GetBatch that read any record: the average record
  // size behind estimatedTotalBytesBehindLatest.
  int64_t last_batch_bytes_ = 0;
  int64_t last_batch_records_ = 0;
  Clock* clock_;  // ctx_.clock or the default clock
  std::shared_ptr<Clock> default_clock_;
  int64_t last_trigger_ms_ = 0;  // 0: not yet set (Spark's lastTriggerMillis)
};

}  // namespace sluice::sources::kafka
