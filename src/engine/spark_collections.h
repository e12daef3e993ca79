// Internal to src/engine: Spark's array, map and collecting functions as functions and macros
// of the engine's database (docs/sql-reference.md "Spark functions"). struct / named_struct are
// rewritten by the dialect (src/dialect/functions.cc) into struct_pack.
//
//   size(x)                       the number of elements of an ARRAY or entries of a MAP (INT);
//                                 NULL for NULL (Spark under ANSI).
//   spark_element(x, k)           x[k] as Spark reads it (the dialect writes every subscript so):
//                                 an ARRAY's element k counting from 0, an error out of bounds
//                                 (INVALID_ARRAY_INDEX, Spark under ANSI); a MAP's value for the
//                                 key k, NULL when missing.
//   spark_element_at(x, k), spark_try_element_at(x, k)   element_at: 1-based, negative from the
//                                 end, 0 an error, out of bounds an error (try_: NULL); a MAP's
//                                 value or NULL.
//   spark_reverse(x)              a STRING or an ARRAY reversed.
//   (These bind, by the type of x, as the engine's function for it: DuckDB's bind_expression.)
//   Macros with Spark's semantics: spark_array_contains, spark_array_distinct, array_union,
//   spark_array_intersect, array_except (first occurrences in order, NULL kept once),
//   arrays_overlap, array_join, array_max, array_min, array_remove, spark_array_prepend,
//   array_compact, array_insert, slice, shuffle, map_from_arrays; the helpers of the dialect's
//   higher-order functions: spark_exists / spark_forall (three-valued over the lambda's
//   results), spark_map_zip (map_zip_with's keys and both values), spark_array_pairs and
//   spark_sort_by_comparison (array_sort with a comparator: a stable sort by the comparator's
//   results over every pair).
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
