// Internal to src/engine: Spark's array, map and collecting functions as functions and macros
// of the engine's database (docs/sql-reference.md "Spark functions"). struct / named_struct are
// rewritten by the dialect (src/dialect/functions.cc) into struct_pack.
//
//   size(x)                       the number of elements of an ARRAY or entries of a MAP (INT);
//                                 NULL for NULL (Spark under ANSI).
//   Macros: collect_list / collect_set (NULLs skipped, [] over no rows), every, percentile,
//   explode / explode_outer (of an ARRAY), sequence (integers), array_repeat, map_contains_key,
//   str_to_map; spark_first / spark_last (first(x, ignoreNulls)) where DuckDB has the name: the
//   dialect's rename table maps those.
//
// Include only from src/engine/*.cc.
#pragma once

#include "duckdb.hpp"
#include "duckdb/main/extension/extension_loader.hpp"

namespace sluice::engine::internal {

// Throws DuckDB exceptions.
void RegisterSparkCollections(duckdb::ExtensionLoader& loader);

}  // namespace sluice::engine::internal
