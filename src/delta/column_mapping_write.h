// Writing tables with column mapping (column_mapping.h): data files, their stats and their
// partition values use physical names, and every field a write adds gets a physical name and an
// id (delta.columnMapping.maxColumnId counts them), as Delta's writers do. Modes `name` and `id`
// are written alike: physical names ("col-<uuid>") and, on every struct field of the files, the
// field's id as its Parquet field id (mode `id` readers such as Spark match columns by it; Spark
// writes them in mode `name` too).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "delta/actions.h"
#include "delta/schema.h"
#include "engine/engine.h"
#include "engine/parquet_field_ids.h"

namespace sluice::delta {

// What a data file of the table holds: `rows` under physical names (nested fields too; columns
// of `rows` that are not table columns, e.g. _change_type, pass through), the physical schema of
// those columns, the partition columns' physical names, and the Parquet field ids of the table
// columns (by physical name, ParquetFieldIds).
struct PhysicalRows {
  engine::Batch rows;
  engine::Schema schema;
  std::vector<std::string> partition_columns;
  std::vector<engine::ParquetFieldId> field_ids;
};

// The Parquet field ids of the physical twin of `schema` (PhysicalSchema): each struct field, at
// any depth, under its physical name with its delta.columnMapping.id; list element and map
// key/value steps without one. Corruption naming the field when an id does not fit Parquet's
// 32-bit field_id or a field has no physical name.
Result<std::vector<engine::ParquetFieldId>> ParquetFieldIds(const DeltaSchema& schema);

// `rows` (the table's logical columns, in schema order, maybe followed by other columns) for a
// table with `schema` and `metadata`. Mode none: returned as they are.
Result<PhysicalRows> ToPhysicalRows(engine::Connection* conn, const engine::Batch& rows,
                                    const DeltaSchema& schema, const Metadata& metadata);

// Gives every field of `fields` (at any depth) that has no physical name in `*field_metadata`
// one: "col-<uuid>", or the field's own name when `keep_names` (a table being upgraded to
// column mapping, whose files hold the display names), and the next id after
// configuration["delta.columnMapping.maxColumnId"], which it updates.
Status AssignColumnMapping(const engine::Schema& fields, bool keep_names,
                           FieldMetadata* field_metadata,
                           std::map<std::string, std::string>* configuration);

}  // namespace sluice::delta
