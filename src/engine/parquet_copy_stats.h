// Internal to src/engine: a column's Parquet statistics taken from what DuckDB's
// `COPY ... TO ... (FORMAT parquet, RETURN_STATS true)` reports, so that writing a Delta data file
// needs no second statement over the batch for them.
#pragma once

#include <cstdint>
#include <optional>

#include "duckdb.hpp"
#include "engine/engine.h"
#include "engine/types.h"

namespace sluice::engine::internal {

// The statistics of `field` from the COPY result's `column_statistics` value (a MAP from the
// quoted column name to a MAP with "min", "max", "null_count", "has_nan"), when they are exactly
// what `CAST(min(col) AS VARCHAR)`, `CAST(max(col) AS VARCHAR)` and `count(*) - count(col)` over
// the same `num_rows` rows give:
// - the type is an integer (TINYINT..BIGINT), FLOAT, DOUBLE, DECIMAL, VARCHAR, DATE or
//   TIMESTAMP; not TIMESTAMPTZ (its cast depends on the session's TimeZone), BOOLEAN (COPY
//   reports no min/max), nested types or the rest;
// - min and max are present exactly when the column has a non-null value;
// - VARCHAR bounds are shorter than 256 bytes (DuckDB truncates longer ones);
// - floating point has no NaN (min()/max() order NaN, Parquet statistics skip it) and no zero
//   bound (-0.0 and 0.0 compare equal, so which one is reported is not defined).
// Nullopt otherwise: the caller computes the column's statistics itself.
std::optional<ColumnStats> ColumnStatsFromCopy(const Field& field,
                                               const duckdb::Value& column_statistics,
                                               int64_t num_rows);

}  // namespace sluice::engine::internal
