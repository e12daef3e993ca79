// Kafka offsets as the Kafka source keeps them (docs/kafka.md): per topic and partition, the next
// offset to read. The JSON is Spark's (KafkaSourceOffset / JsonUtils.partitionOffsets):
// {"orders":{"0":23,"1":7}}, topics and partitions in sorted order, so the same offsets always
// give the same text.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "common/result.h"

namespace sluice::sources::kafka {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const TopicPartition&) const = default;
  // "orders-3", Spark's TopicPartition.toString.
  std::string ToString() const { return topic + "-" + std::to_string(partition); }
};

using PartitionOffsets = std::map<TopicPartition, int64_t>;

// Special values in startingOffsets JSON.
constexpr int64_t kEarliest = -2;
constexpr int64_t kLatest = -1;

std::string OffsetsToJson(const PartitionOffsets& offsets);

// Parses offsets JSON ({"t":{"0":5}}). `what` names the text in errors ("startingOffsets",
// "the checkpoint's offset"). With allow_special, -2 (earliest) and -1 (latest) are accepted;
// otherwise every offset must be >= 0.
Result<PartitionOffsets> OffsetsFromJson(const std::string& json, const std::string& what,
                                         bool allow_special);

// Parses the `assign` option: {"t":[0,1]}.
Result<std::set<TopicPartition>> AssignmentFromJson(const std::string& json);

// Spark's KafkaMicroBatchStream.rateLimit: moves at most `limit` offsets in total from `from`
// towards `until`, split across partitions in proportion to their backlog (`until - from`); a
// partition's share is rounded down, or up when it is below one so no partition starves; never
// past `until`. Partitions of `until` missing from `from` start at `new_partition_start`.
PartitionOffsets RateLimit(int64_t limit, const PartitionOffsets& from,
                           const PartitionOffsets& until,
                           const PartitionOffsets& new_partition_start);

}  // namespace sluice::sources::kafka
