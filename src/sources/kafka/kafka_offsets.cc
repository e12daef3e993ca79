#include "sources/kafka/kafka_offsets.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

namespace sluice::sources::kafka {

std::string OffsetsToJson(const PartitionOffsets& offsets) {
  // Written by hand so that partitions come in numeric order ("2" before "10").
  std::string out = "{";
  std::string topic;
  bool first_topic = true;
  for (const auto& [tp, offset] : offsets) {
    if (first_topic || tp.topic != topic) {
      if (!first_topic) out += "},";
      out += nlohmann::json(tp.topic).dump() + ":{";
      topic = tp.topic;
      first_topic = false;
    } else {
      out += ",";
    }
    out += "\"" + std::to_string(tp.partition) + "\":" + std::to_string(offset);
  }
  if (!first_topic) out += "}";
  return out + "}";
}

namespace {

Result<int32_t> ParsePartition(const std::string& text, const std::string& what) {
  if (text.empty() || text.size() > 10 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return Status::InvalidArgument(what + ": partition '" + text + "' is not a partition number");
  }
  int64_t p = std::stoll(text);
  if (p > std::numeric_limits<int32_t>::max()) {
    return Status::InvalidArgument(what + ": partition '" + text + "' is out of range");
  }
  return static_cast<int32_t>(p);
}

}  // namespace

Result<PartitionOffsets> OffsetsFromJson(const std::string& json, const std::string& what,
                                         bool allow_special) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  const std::string expected =
      what + " must be JSON like {\"topic\":{\"0\":23,\"1\":-2}}, got '" + json + "'";
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument(expected);
  PartitionOffsets out;
  for (auto& [topic, partitions] : j.items()) {
    if (!partitions.is_object()) return Status::InvalidArgument(expected);
    for (auto& [partition, offset] : partitions.items()) {
      SLUICE_ASSIGN_OR_RETURN(int32_t p, ParsePartition(partition, what));
      if (!offset.is_number_integer()) return Status::InvalidArgument(expected);
      int64_t o = offset.get<int64_t>();
      if (o < (allow_special ? kEarliest : 0)) {
        return Status::InvalidArgument(
            what + ": offset " + std::to_string(o) + " of " + topic + "-" + partition +
            " is not valid" + (allow_special ? " (use -2 for earliest, -1 for latest)" : ""));
      }
      out[TopicPartition{topic, p}] = o;
    }
  }
  return out;
}

Result<std::set<TopicPartition>> AssignmentFromJson(const std::string& json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  const std::string expected =
      "option 'assign' must be JSON like {\"topicA\":[0,1],\"topicB\":[2]}, got '" + json + "'";
  if (j.is_discarded() || !j.is_object() || j.empty()) return Status::InvalidArgument(expected);
  std::set<TopicPartition> out;
  for (auto& [topic, partitions] : j.items()) {
    if (!partitions.is_array()) return Status::InvalidArgument(expected);
    for (auto& p : partitions) {
      if (!p.is_number_integer() || p.get<int64_t>() < 0 ||
          p.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
        return Status::InvalidArgument(expected);
      }
      out.insert(TopicPartition{topic, static_cast<int32_t>(p.get<int64_t>())});
    }
  }
  return out;
}

PartitionOffsets RateLimit(int64_t limit, const PartitionOffsets& from,
                           const PartitionOffsets& until,
                           const PartitionOffsets& new_partition_start) {
  auto begin_of = [&](const TopicPartition& tp) -> std::optional<int64_t> {
    if (auto it = from.find(tp); it != from.end()) return it->second;
    if (auto it = new_partition_start.find(tp); it != new_partition_start.end()) return it->second;
    return std::nullopt;
  };
  std::map<TopicPartition, int64_t> sizes;
  double total = 0;
  for (const auto& [tp, end] : until) {
    auto begin = begin_of(tp);
    if (begin && end - *begin > 0) {
      sizes[tp] = end - *begin;
      total += static_cast<double>(end - *begin);
    }
  }
  if (total < 1) return until;
  PartitionOffsets out;
  for (const auto& [tp, end] : until) {
    auto size = sizes.find(tp);
    if (size == sizes.end()) {
      out[tp] = end;
      continue;
    }
    int64_t begin = *begin_of(tp);
    double prorate = static_cast<double>(limit) * (static_cast<double>(size->second) / total);
    int64_t share = static_cast<int64_t>(prorate < 1 ? std::ceil(prorate) : std::floor(prorate));
    int64_t off = share > std::numeric_limits<int64_t>::max() - begin
                      ? std::numeric_limits<int64_t>::max()
                      : begin + share;
    out[tp] = std::min(end, off);
  }
  return out;
}

}  // namespace sluice::sources::kafka
