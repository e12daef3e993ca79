// Checking a write's data against the table schema, and schema evolution (mergeSchema,
// ALTER TABLE ADD COLUMNS), with Delta's rules:
//
// - Columns match by name, case-insensitively; the table's spelling wins.
// - A table column missing from the data is written as NULL when nullable; a NOT NULL column
//   missing from the data is refused.
// - A data column missing from the table is refused unless merge_schema is set; then it is
//   appended to the table schema (nullable). Nested struct fields merge the same way.
// - Types must be equal, except for safe widening that Delta's schema merge also accepts on
//   write (byte -> short -> int -> long, float -> double) and untyped NULL columns: the data is
//   cast to the table type. Any other difference is refused with a message naming the column
//   and both types, e.g. "column 'a' has type string in the data but long in the table".
// - Partition columns must be top-level primitive columns (not binary, not nested).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "engine/types.h"

namespace sluice::delta {

struct WriteSchemaPlan {
  // The table schema after the write (== the old one unless merge_schema added columns).
  engine::Schema table_schema;
  bool schema_changed = false;
  // One SQL expression per column of `table_schema`, in order, over a relation whose columns
  // are the data's: e.g. CAST("A" AS BIGINT) AS "a", or CAST(NULL AS VARCHAR) AS "b".
  std::vector<std::string> projection;
  // True when the data already has exactly the table's columns, names, order and types, so it
  // can be written as is.
  bool identity = false;
  // Table columns that are NOT NULL and present in the data: the write must check for nulls.
  std::vector<std::string> not_null_columns;
};

// Plans writing data of `data_schema` into a table of `table_schema`. InvalidArgument (with the
// column and both types) for a refused change.
Result<WriteSchemaPlan> PlanWriteSchema(const engine::Schema& table_schema,
                                        const engine::Schema& data_schema, bool merge_schema);

// The schema after ALTER TABLE ADD COLUMNS: `added` appended (forced nullable). InvalidArgument
// when a column already exists (case-insensitively) or has a type Delta cannot store.
Result<engine::Schema> AddColumns(const engine::Schema& table_schema,
                                  const std::vector<engine::Field>& added);

// Checks that `partition_columns` name distinct top-level primitive columns of `schema`
// (exact spelling returned in schema case). InvalidArgument otherwise.
Result<std::vector<std::string>> ResolvePartitionColumns(
    const engine::Schema& schema, const std::vector<std::string>& partition_columns);

// Delta's name for a type, for messages ("long", "struct<a:int>", "array<string>").
std::string DeltaTypeName(const engine::DataType& type);

}  // namespace sluice::delta
