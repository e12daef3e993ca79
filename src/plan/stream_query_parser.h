// The streaming query parser: cuts the `FROM STREAM <relation> [WATERMARK ...] [AS alias]`
// relations out of a SELECT (DuckDB cannot parse them) and replaces each with
// `__stream_<i> AS <alias>`. docs/streaming-plan.md §1; the syntax is docs/sql-reference.md
// "Streams".
//
//   FROM STREAM events WATERMARK ts DELAY OF INTERVAL 10 SECONDS AS e
//   FROM STREAM raw WATERMARK to_timestamp(ts_str) AS ts DELAY OF INTERVAL 1 MINUTE AS r
//   FROM STREAM table_changes('events', 0)
//   FROM STREAM read_files('landing/', format => 'json', maxFilesPerTrigger => 2)
//   FROM STREAM read_rate(rowsPerSecond => 10), read_kafka(...), nexmark(...)
//   FROM STREAM events WITH (skipChangeCommits = true, maxFilesPerTrigger = 10) AS e
//   FROM STREAM(events) WITH ('startingVersion' = 3)    -- Databricks' STREAM(t) form
//
// Source options: `WITH (key [=] value, ...)` right after the relation (before its alias and
// WATERMARK), as Databricks SQL's options of a table reference; inside the parentheses of
// STREAM(t WITH (...)) too. They join the named arguments (keys lower-cased).
//
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace sluice::plan {

struct WatermarkSpec {
  std::string expression;  // SQL over the source's columns: "timestamp_seconds(value)" or "ts"
  std::string column;      // the event-time column it defines or names: "eventTime" / "ts"
  int64_t delay_ms = 0;    // DELAY OF INTERVAL ...

  // True when `expression` is just the column name (no new column is computed).
  bool IsPlainColumn() const;
};

struct StreamRelation {  // one FROM STREAM ... in the text, in order of appearance
  enum class Kind { kTable, kTableChanges, kReadFiles, kReadRate, kReadKafka, kNexmark };
  Kind kind = Kind::kTable;
  std::string table;                    // kTable / kTableChanges: the name as written
  std::vector<std::string> positional;  // positional arguments: literals' values
  std::map<std::string, std::string>
      named;  // name => value ("format" => "json") and WITH options, names lower-cased
  std::optional<WatermarkSpec> watermark;
  std::string alias;  // as written, or "__stream_<i>" when none
};

// "table", "table_changes", "read_files", "read_rate", "read_kafka", "nexmark".
const char* StreamRelationKindName(StreamRelation::Kind kind);

struct ParsedStreamingQuery {
  std::string sql;  // the query with relation i replaced by "__stream_<i> AS <alias>"
  std::vector<StreamRelation> streams;
};

// "__stream_<i>": the view a stream relation becomes.
std::string StreamViewName(size_t i);

// Parses `select_sql`. Positional/named argument values: string literals unquoted, numbers and
// other words as written, anything else (an expression) as its SQL text. For table_changes the
// first positional argument is also stored in `table`. Errors (InvalidArgument) name the line and
// column: STREAM not followed by a relation, an unknown table function, WATERMARK without
// DELAY OF INTERVAL, a bad interval, a query without STREAM, a malformed WITH (...) or an option
// given twice.
Result<ParsedStreamingQuery> ParseStreamingQuery(std::string_view select_sql);

}  // namespace sluice::plan
