// Internal to src/engine: Spark's datetime functions as functions and macros of the engine's
// database (docs/sql-reference.md "Spark functions").
//
//   spark_date_format(TIMESTAMP, pattern)  Spark's date_format with its pattern letters (G y M L
//       d D Q q E a h K k H m s S, the zone letters X x Z z V O, 'text', ''): the wall clock of the
//       TIMESTAMP as text. Week-based letters (Y w W u e c F) and optional sections ([ ]) are
//       refused, as Spark refuses the week-based ones; the zone letters are refused unless the
//       session time zone is UTC (the TIMESTAMP has no zone of its own).
//   spark_strptime_format(pattern)  the strptime format of a Spark parsing pattern ('dd/MM/yyyy'
//       -> '%d/%m/%Y'), for to_timestamp / to_date / unix_timestamp with a pattern.
//   spark_window(ts, size[, slide[, start]])  window() of a batch query: the tumbling window
//       {start, end} holding ts; month durations and sliding windows are refused (by name).
//   Macros under Spark's names (date_format, to_date, unix_timestamp, from_unixtime, ...) and
//   under spark_<name> where DuckDB has the name with other semantics (to_timestamp, datediff,
//   date_sub, trunc, date_trunc, dayofweek, weekday): the dialect's rename table maps those.
//
// Include only from src/engine/*.cc.
#pragma once

#include <string>
#include <string_view>

#include "duckdb.hpp"
#include "duckdb/main/extension/extension_loader.hpp"

namespace sluice::engine::internal {

// Throws DuckDB exceptions.
void RegisterSparkDatetime(duckdb::ExtensionLoader& loader);

// Spark pattern -> strptime format. Throws duckdb::InvalidInputException naming the letter.
std::string SparkPatternToStrptime(std::string_view pattern);

}  // namespace sluice::engine::internal
