#include "stream/persisted_conf.h"

#include <algorithm>

namespace sluice::stream {

const std::vector<std::string_view>& PersistedConfKeys() {
  static const std::vector<std::string_view> keys = {
      kConfShufflePartitions,
      kConfStateStoreProviderClass,
      kConfMultipleWatermarkPolicy,
      kConfFlatMapGroupsWithStateFormatVersion,
      kConfAggregationStateFormatVersion,
      kConfJoinStateFormatVersion,
      kConfStateStoreCompressionCodec,
      kConfStateStoreRocksDbFormatVersion,
      kConfStatefulOperatorUseStrictDistribution,
      kConfPruneFiltersCanPruneStreamingSubplan,
      kConfStateStoreEncodingFormat,
      kConfStateStoreRowChecksumEnabled,
  };
  return keys;
}

bool IsPersistedConfKey(std::string_view key) {
  const auto& keys = PersistedConfKeys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

std::optional<std::string> LegacyConfDefault(std::string_view key) {
  if (key == kConfMultipleWatermarkPolicy) return "min";
  if (key == kConfFlatMapGroupsWithStateFormatVersion) return "1";
  if (key == kConfAggregationStateFormatVersion) return "1";
  if (key == kConfJoinStateFormatVersion) return "1";
  if (key == kConfStateStoreCompressionCodec) return "lz4";
  if (key == kConfStatefulOperatorUseStrictDistribution) return "false";
  if (key == kConfPruneFiltersCanPruneStreamingSubplan) return "true";
  if (key == kConfStateStoreEncodingFormat) return "unsafeRow";
  if (key == kConfStateStoreRowChecksumEnabled) return "false";
  return std::nullopt;
}

ConfMap DefaultPersistedConf() {
  return ConfMap{
      {std::string(kConfShufflePartitions), "4"},  // Sluice default; Spark: 200 (docs/streaming.md)
      {std::string(kConfStateStoreProviderClass), "rocksdb"},
      {std::string(kConfMultipleWatermarkPolicy), "min"},
      {std::string(kConfFlatMapGroupsWithStateFormatVersion), "2"},
      {std::string(kConfAggregationStateFormatVersion), "2"},
      {std::string(kConfJoinStateFormatVersion), "2"},
      {std::string(kConfStateStoreCompressionCodec), "lz4"},
      {std::string(kConfStateStoreRocksDbFormatVersion), "5"},
      {std::string(kConfStatefulOperatorUseStrictDistribution), "true"},
      {std::string(kConfPruneFiltersCanPruneStreamingSubplan), "false"},
      {std::string(kConfStateStoreEncodingFormat), "unsafeRow"},
      {std::string(kConfStateStoreRowChecksumEnabled), "false"},
  };
}

std::optional<std::string> SparkConfName(std::string_view sluice_key) {
  constexpr std::string_view kSqlPrefix = "sluice.sql.";
  constexpr std::string_view kStreamingPrefix = "sluice.streaming.";
  constexpr std::string_view kOptimizerPrefix = "sluice.optimizer.";
  auto starts = [&](std::string_view p) { return sluice_key.substr(0, p.size()) == p; };
  if (starts(kSqlPrefix)) return "spark.sql." + std::string(sluice_key.substr(kSqlPrefix.size()));
  if (starts(kStreamingPrefix)) {
    return "spark.sql.streaming." + std::string(sluice_key.substr(kStreamingPrefix.size()));
  }
  if (starts(kOptimizerPrefix)) {
    return "spark.sql.optimizer." + std::string(sluice_key.substr(kOptimizerPrefix.size()));
  }
  return std::nullopt;
}

}  // namespace sluice::stream
