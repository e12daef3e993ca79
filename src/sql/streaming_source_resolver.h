// Resolves the STREAM relations of a streaming query (plan/stream_query_parser.h) to source
// formats and options of sources/source_factory.h:
//   STREAM t [WITH (options)]             -> delta      {path: <t's location>, options}
//   STREAM t WITH (readChangeFeed = true, startingVersion = v) -> delta_cdf
//   STREAM delta.`/p`                     -> delta      {path: /p}
//   STREAM table_changes('t', v | 'ts')   -> delta_cdf  {path, startingVersion | startingTimestamp}
//   STREAM read_files('dir', ...)         -> files      {path: absolute dir, other named args}
//   STREAM read_rate(...)                 -> rate       {named args}
//   STREAM read_kafka(...) / nexmark(...) -> kafka / nexmark {named args}
// Named arguments are passed on as source options (names are case-insensitive there). Relative
// paths resolve against the process's working directory, once, here.
//
// Thread safety: pure apart from reading the catalog.
#pragma once

#include <functional>
#include <string>

#include "common/result.h"
#include "plan/stream_query_parser.h"
#include "sql/streaming_table_catalog.h"
#include "sql/table_catalog.h"

namespace sluice::sql {

// NotFound for a table that does not exist (unless `is_streaming_table` says it is a streaming
// table whose first batch will create it); InvalidArgument for missing arguments and for an
// option a Delta table source does not know (values are checked when the source opens).
Result<ResolvedSource> ResolveStreamRelation(
    const plan::StreamRelation& relation, const TableCatalog& tables,
    const std::function<bool(const std::string&)>& is_streaming_table = {});

}  // namespace sluice::sql
