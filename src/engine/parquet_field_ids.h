// Parquet field ids for the columns of a written file: the `field_id` of the Parquet schema
// elements, which readers such as Spark match columns by (Delta column mapping mode `id`, also
// written in mode `name`, as Delta does). Ids are given per column and per nested field, by the
// names the file holds; a list's `element` and a map's `key` / `value` steps carry no id of their
// own but lead to the struct fields below them. Columns and fields not named get no field id.
//
// Written through DuckDB's `COPY ... (FORMAT parquet, FIELD_IDS {...})`, on the same path as
// Connection::WriteParquet (same statistics, same options).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"

namespace sluice::engine {

// One column or nested field: its name in the file, its id (none: the element has no field id)
// and the ids below it (struct fields; for a list the single child `element`, for a map `key`
// and `value`, each without an id of its own).
struct ParquetFieldId {
  std::string name;
  std::optional<int32_t> id;
  std::vector<ParquetFieldId> children;
};

// The value of DuckDB's FIELD_IDS copy option for `ids` (a struct literal keyed by name:
// an integer, or {__duckdb_field_id: id, child...} when the field has children). Empty `ids`:
// empty text (no option). InvalidArgument for a field named `__duckdb_field_id`, which DuckDB
// reserves, or a name given twice among siblings.
Result<std::string> FieldIdsOptionSql(const std::vector<ParquetFieldId>& ids);

// Connection::WriteParquet, with the field ids of `ids` (top-level entries match the batch's
// columns by name; a name that is not a column is InvalidArgument from DuckDB).
Result<ParquetFileInfo> WriteParquetWithFieldIds(Connection* conn, const Batch& batch,
                                                 const std::string& path,
                                                 const ParquetWriteOptions& options,
                                                 const std::vector<ParquetFieldId>& ids);

}  // namespace sluice::engine
