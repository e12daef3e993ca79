// Writing tables with column mapping (column_mapping.h): data files, their stats and their
// partition values use physical names, and every field a write adds gets a physical name and an
// id (delta.columnMapping.maxColumnId counts them), as Delta's writers do.
//
// Sluice writes mode `name` only: mode `id` readers (Spark) match Parquet field ids, which the
// data file writer does not write yet, so CheckWriteSupported (table_writer.h) refuses `id`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "delta/actions.h"
#include "delta/schema.h"
#include "engine/engine.h"

namespace sluice::delta {

// What a data file of the table holds: `rows` under physical names (nested fields too; columns
// of `rows` that are not table columns, e.g. _change_type, pass through), the physical schema of
// those columns, and the partition columns' physical names.
struct PhysicalRows {
  engine::Batch rows;
  engine::Schema schema;
  std::vector<std::string> partition_columns;
};

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
