// Delta per-file statistics (add.stats) from the engine's Parquet write statistics.
//
// Shape (PROTOCOL.md "Per-file Statistics"), nested like the schema:
//   {"numRecords":3,"minValues":{"a":1,"s":{"x":"p"}},"maxValues":{...},"nullCount":{"a":0,"s":{"x":1}}}
// Like Spark (StatisticsCollection):
// - min/max only for numbers (JSON numbers; NaN/Infinity left out), decimals (exact text),
//   strings, dates ("YYYY-MM-DD") and timestamps (ISO-8601 truncated to milliseconds,
//   "...T...Z" for timestamp, no zone for timestamp_ntz); none for boolean, binary, arrays, maps.
// - Strings longer than kStringPrefixLength code points: min is the 32-code-point prefix (a lower
//   bound); max is the prefix followed by U+FFFD, or U+10FFFF when the next code point is
//   >= U+FFFD, so it stays an upper bound; when no such bound exists max is left out.
// - nullCount for every leaf (arrays and maps too); columns whose values are all null have no
//   min/max.
// - Only the first `num_indexed_cols` leaf columns (delta.dataSkippingNumIndexedCols, default 32;
//   -1 = all) get stats, in schema order; partition columns never appear (they are not in files).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "engine/engine.h"
#include "engine/types.h"

namespace sluice::delta {

inline constexpr size_t kStringPrefixLength = 32;
inline constexpr int kDefaultNumIndexedCols = 32;

// Lower bound of a string truncated to `max_code_points` (the string itself when short enough).
std::string TruncateMinString(std::string_view s, size_t max_code_points = kStringPrefixLength);
// Upper bound of a string truncated to `max_code_points`; nullopt when none exists.
std::optional<std::string> TruncateMaxString(std::string_view s,
                                             size_t max_code_points = kStringPrefixLength);

// The stats JSON text for one data file whose columns are `file_schema` (the table schema
// without partition columns) and whose engine statistics are `info`. InvalidArgument when a
// statistic does not parse as its column's type.
Result<std::string> BuildStatsJson(const engine::Schema& file_schema,
                                   const engine::ParquetFileInfo& info,
                                   int num_indexed_cols = kDefaultNumIndexedCols);

}  // namespace sluice::delta
