// Delta column mapping (PROTOCOL.md "Column Mapping"): with delta.columnMapping.mode `name` or
// `id`, every field of the schema (nested ones included) carries a physical name
// (`delta.columnMapping.physicalName`) and an id (`delta.columnMapping.id`) in its metadata.
// Data files, add.stats (minValues/maxValues/nullCount keys) and add.partitionValues use the
// physical names; the schema's names are display (logical) names, so a RENAME COLUMN changes
// only the schema and a DROP COLUMN removes the field while the files keep its data.
//
// This file turns a table's logical schema into its physical twin (the same shape, every struct
// field renamed to its physical name) and gives the SQL that turns a value read from a file
// under the physical shape back into the logical shape. Mode `none` (or absent): the physical
// schema is the logical one. Sluice reads both `name` and `id` mode files by physical name
// (Delta writes the physical names and the field ids into every file it writes in `id` mode).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "delta/actions.h"
#include "delta/schema.h"
#include "engine/types.h"

namespace sluice::delta {

enum class ColumnMappingMode { kNone, kName, kId };

// The table's mode from delta.columnMapping.mode (absent: kNone; case-insensitive).
// NotSupported naming the value for any other value.
Result<ColumnMappingMode> ColumnMappingModeOf(const Metadata& metadata);
std::string_view ColumnMappingModeName(ColumnMappingMode mode);

// The physical schema of `schema` (struct fields at every depth renamed to their physical
// names; list/map children keep element/key/value). kNone: `schema.fields` unchanged.
// Corruption naming the field's path when a field of a mapped table has no physical name.
Result<engine::Schema> PhysicalSchema(const DeltaSchema& schema, ColumnMappingMode mode);
// The same for the table's own mode (metadata's delta.columnMapping.mode).
Result<engine::Schema> PhysicalSchemaOf(const DeltaSchema& schema, const Metadata& metadata);

// The field's delta.columnMapping.physicalName / delta.columnMapping.id (by path: "a", "s.x",
// "arr.element.b"), when its metadata has one.
std::optional<std::string> PhysicalNameAt(const FieldMetadata& metadata, const std::string& path);
std::optional<int64_t> FieldIdAt(const FieldMetadata& metadata, const std::string& path);

// Field id -> physical name of every field of `schema` (any depth) that has both.
std::map<int64_t, std::string> PhysicalNamesById(const DeltaSchema& schema);

// SQL turning `expr`, a value of type `physical`, into the same value of type `logical` (the
// same shape with other struct field names): struct_pack per struct (NULL stays NULL),
// list_transform per list, map_from_entries per map, `expr` itself where the names agree.
// InvalidArgument when the two shapes differ.
Result<std::string> PhysicalToLogicalSql(const std::string& expr, const engine::DataType& physical,
                                         const engine::DataType& logical);

// The physical name of the top-level column `logical_name` (case-insensitive), or nullopt when
// the column is not in `logical`. `physical` is PhysicalSchema of `logical`, in the same order.
std::optional<std::string> PhysicalColumnName(const engine::Schema& logical,
                                              const engine::Schema& physical,
                                              std::string_view logical_name);

// The partition columns (logical names, as metaData.partitionColumns) as physical names.
std::vector<std::string> PhysicalPartitionColumns(
    const engine::Schema& logical, const engine::Schema& physical,
    const std::vector<std::string>& partition_columns);

// Under column mapping, the first field (at any depth) whose physical name in `from` has
// another logical path in `to` ("column 'v' was renamed to 'w'") or is gone from `to` ("column
// 'drop_me' was dropped"): the read-incompatible changes Delta's streaming source refuses. A
// field without a physical name counts under its logical name (a table before its upgrade).
// nullopt when `to` only adds fields (or no field has a physical name in either schema).
std::optional<std::string> RenameOrDrop(const DeltaSchema& from, const DeltaSchema& to);

// Every such change between `from` and `to`, in `from`'s field order: renamed fields as
// (old logical path, new logical path) and dropped fields by their logical path in `from` (a
// dropped struct is listed, its fields are not; a renamed struct's fields are listed only when
// their own name changed too). Empty when `to` only adds fields.
struct ColumnChanges {
  std::vector<std::pair<std::string, std::string>> renamed;
  std::vector<std::string> dropped;
  bool empty() const { return renamed.empty() && dropped.empty(); }
};
ColumnChanges RenamesAndDrops(const DeltaSchema& from, const DeltaSchema& to);

}  // namespace sluice::delta
