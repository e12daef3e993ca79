// The configuration persisted in every offsets/<N> entry ("conf" in the batch metadata) and
// restored on restart (Spark's OffsetSeqMetadata.relevantSQLConfs). Sluice keeps Spark's key
// names under its own namespace: spark.sql.streaming.X -> sluice.streaming.X,
// spark.sql.shuffle.partitions -> sluice.sql.shuffle.partitions, spark.sql.optimizer.X ->
// sluice.optimizer.X. The full mapping is in docs/formats/checkpoint.md.
//
// Thread safety: constants and pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::stream {

// A persisted configuration: key -> value, both strings (serialized sorted by key).
using ConfMap = std::map<std::string, std::string>;

// The keys (Spark name in the comment).
inline constexpr std::string_view kConfShufflePartitions =
    "sluice.sql.shuffle.partitions";  // spark.sql.shuffle.partitions (= stateful partitions)
inline constexpr std::string_view kConfStateStoreProviderClass =
    "sluice.streaming.stateStore.providerClass";
inline constexpr std::string_view kConfMultipleWatermarkPolicy =
    "sluice.streaming.multipleWatermarkPolicy";
inline constexpr std::string_view kConfFlatMapGroupsWithStateFormatVersion =
    "sluice.streaming.flatMapGroupsWithState.stateFormatVersion";
inline constexpr std::string_view kConfAggregationStateFormatVersion =
    "sluice.streaming.aggregation.stateFormatVersion";
inline constexpr std::string_view kConfJoinStateFormatVersion =
    "sluice.streaming.join.stateFormatVersion";
inline constexpr std::string_view kConfStateStoreCompressionCodec =
    "sluice.streaming.stateStore.compression.codec";
inline constexpr std::string_view kConfStateStoreRocksDbFormatVersion =
    "sluice.streaming.stateStore.rocksdb.formatVersion";
inline constexpr std::string_view kConfStatefulOperatorUseStrictDistribution =
    "sluice.streaming.statefulOperator.useStrictDistribution";
inline constexpr std::string_view kConfPruneFiltersCanPruneStreamingSubplan =
    "sluice.optimizer.pruneFiltersCanPruneStreamingSubplan";
inline constexpr std::string_view kConfStateStoreEncodingFormat =
    "sluice.streaming.stateStore.encodingFormat";
inline constexpr std::string_view kConfStateStoreRowChecksumEnabled =
    "sluice.streaming.stateStore.rowChecksum.enabled";

// All persisted keys, in a fixed order (the order of the table in the format doc).
const std::vector<std::string_view>& PersistedConfKeys();

bool IsPersistedConfKey(std::string_view key);

// The value a key gets when an old offsets entry lacks it (Spark's
// relevantSQLConfDefaultValues): policy "min", codec "lz4", strict distribution "false", state
// format versions "1", prune filters "true", encoding "unsafeRow", row checksum "false".
// nullopt for keys without a legacy default (shuffle partitions, provider class, RocksDB format
// version): for those the session's value prevails, as in Spark.
std::optional<std::string> LegacyConfDefault(std::string_view key);

// The values Sluice persists for a new checkpoint when the session sets nothing: the engine's
// current defaults for every persisted key.
ConfMap DefaultPersistedConf();

// The Spark name of a persisted key ("sluice.sql.shuffle.partitions" ->
// "spark.sql.shuffle.partitions"); nullopt for a key outside the sluice.* namespace.
std::optional<std::string> SparkConfName(std::string_view sluice_key);

}  // namespace sluice::stream
