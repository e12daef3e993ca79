// Source "kafka" of `sluice bench nexmark` (docs/nexmark.md "Kafka-fed runs"): the generator's
// events as JSON records in librdkafka's in-process mock cluster, which the feed starts and
// stops itself.
//
// Topics: one per kind, "nexmark-person", "nexmark-auction", "nexmark-bid", each with the same
// number of partitions. Event k (of the unified stream) is the record whose value is k's JSON
// line (nexmark::JsonFormatter, byte for byte what `nexmark_emit` prints, without the final
// '\n'), no key, timestamp (CreateTime) = the event's dateTime, in the topic of its kind, on
// partition (j mod partitions) where j counts the events of that kind before k. So each
// partition is in event-time order and the partitions of a topic advance together.
//
// Retention: the mock keeps about 5 MiB of records per partition and deletes the oldest beyond
// that. ProduceRound therefore produces at most kPartitionBudgetBytes (value bytes plus a record
// overhead estimate) into any partition per round; the caller consumes a round before producing
// the next one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "common/status.h"
#include "sources/nexmark/nexmark_config.h"
#include "sources/nexmark/nexmark_events.h"

namespace sluice::nexmark {
class NexmarkGenerator;
}

namespace sluice::cli {

class NexmarkKafkaFeed {
 public:
  // Bytes a round may put into one partition (the mock keeps ~5 MiB; 1 MiB of slack).
  static constexpr int64_t kPartitionBudgetBytes = int64_t{4} << 20;

  // Starts a mock cluster of one broker and creates the three topics with `partitions` (>= 1)
  // partitions each.
  static Result<std::unique_ptr<NexmarkKafkaFeed>> Start(const nexmark::NexmarkConfig& config,
                                                         int partitions);
  ~NexmarkKafkaFeed();
  NexmarkKafkaFeed(const NexmarkKafkaFeed&) = delete;
  NexmarkKafkaFeed& operator=(const NexmarkKafkaFeed&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }
  int partitions() const { return partitions_; }
  // "nexmark-<kind>" for kind "person", "auction" or "bid".
  static std::string Topic(const std::string& kind) { return "nexmark-" + kind; }

  // Produces the events [next_event(), next_event() + n) and waits until every record is
  // acknowledged, where n <= max_events is the largest count that keeps every partition within
  // kPartitionBudgetBytes, rounded down to a multiple of `multiple` when at least one multiple
  // fits (so that a round holds whole micro-batches). Returns n (>= 1 when max_events >= 1).
  // IOError when a record is refused or not acknowledged within 60 s.
  Result<int64_t> ProduceRound(int64_t max_events, int64_t multiple);
  int64_t next_event() const { return next_event_; }
  // Wall seconds spent generating and producing (outside the query's time).
  double produce_seconds() const { return produce_seconds_; }
  // CPU seconds (user + system) used so far by the mock cluster's broker thread ("rdk:mock",
  // from /proc/self/task/*/stat): the broker's share of the process's CPU, which a real
  // deployment would spend in another process. 0 when /proc cannot be read.
  static double MockBrokerCpuSeconds();

 private:
  struct Handles;
  NexmarkKafkaFeed(std::unique_ptr<nexmark::NexmarkGenerator> generator,
                   std::unique_ptr<Handles> handles, std::string bootstrap, int partitions);

  std::unique_ptr<nexmark::NexmarkGenerator> generator_;
  std::unique_ptr<Handles> handles_;
  std::string bootstrap_;
  int partitions_;
  int64_t next_event_ = 0;
  int64_t kind_counts_[3] = {0, 0, 0};  // events of each kind before next_event_
  double produce_seconds_ = 0;
};

}  // namespace sluice::cli
