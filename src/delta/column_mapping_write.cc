#include "delta/column_mapping_write.h"

#include <cstdint>
#include <cstdlib>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "common/uuid.h"
#include "delta/column_mapping.h"

namespace sluice::delta {

namespace {

using engine::DataType;
using engine::Field;
using engine::TypeId;

std::string JoinPath(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

struct Assigner {
  bool keep_names;
  FieldMetadata* metadata;
  int64_t max_id;

  Status Field(const engine::Field& f, const std::string& prefix) {
    std::string path = JoinPath(prefix, f.name);
    if (!PhysicalNameAt(*metadata, path)) {
      nlohmann::json md = nlohmann::json::object();
      auto it = metadata->find(path);
      if (it != metadata->end()) {
        md = nlohmann::json::parse(it->second, nullptr, false);
        if (!md.is_object()) {
          return Status::Corruption("metadata of field '" + path + "' is not a JSON object");
        }
      }
      md["delta.columnMapping.id"] = ++max_id;
      md["delta.columnMapping.physicalName"] = keep_names ? f.name : "col-" + NewUuidV4();
      (*metadata)[path] = md.dump();
    }
    return Type(f.type, path);
  }
  Status Type(const DataType& t, const std::string& path) {
    if (t.id == TypeId::kStruct) {
      for (const engine::Field& c : t.children) SLUICE_RETURN_NOT_OK(Field(c, path));
    } else if (t.id == TypeId::kList || t.id == TypeId::kMap) {
      for (const engine::Field& c : t.children) {
        SLUICE_RETURN_NOT_OK(Type(c.type, JoinPath(path, c.name)));
      }
    }
    return Status::OK();
  }
};

Result<engine::ParquetFieldId> FieldIdNode(const engine::Field& f, const std::string& path,
                                           const FieldMetadata& metadata, bool struct_field);

Result<std::vector<engine::ParquetFieldId>> ChildIds(const DataType& t, const std::string& path,
                                                     const FieldMetadata& metadata) {
  std::vector<engine::ParquetFieldId> out;
  const bool structs = t.id == TypeId::kStruct;
  if (!structs && t.id != TypeId::kList && t.id != TypeId::kMap) return out;
  for (const engine::Field& c : t.children) {
    SLUICE_ASSIGN_OR_RETURN(engine::ParquetFieldId node,
                            FieldIdNode(c, JoinPath(path, c.name), metadata, structs));
    out.push_back(std::move(node));
  }
  return out;
}

// `f` at logical `path`: a struct field (or top-level column) is named by its physical name and
// carries its id; a list/map step keeps its name and has no id.
Result<engine::ParquetFieldId> FieldIdNode(const engine::Field& f, const std::string& path,
                                           const FieldMetadata& metadata, bool struct_field) {
  engine::ParquetFieldId node;
  node.name = f.name;
  if (struct_field) {
    std::optional<std::string> physical = PhysicalNameAt(metadata, path);
    if (!physical) {
      return Status::Corruption("column mapping: field '" + path +
                                "' has no delta.columnMapping.physicalName in its metadata");
    }
    node.name = *physical;
    if (std::optional<int64_t> id = FieldIdAt(metadata, path)) {
      if (*id < 0 || *id > INT32_MAX) {
        return Status::Corruption("column mapping: field '" + path + "' has id " +
                                  std::to_string(*id) +
                                  ", which does not fit a Parquet field id (32 bits)");
      }
      node.id = static_cast<int32_t>(*id);
    }
  }
  SLUICE_ASSIGN_OR_RETURN(node.children, ChildIds(f.type, path, metadata));
  return node;
}

}  // namespace

Result<std::vector<engine::ParquetFieldId>> ParquetFieldIds(const DeltaSchema& schema) {
  std::vector<engine::ParquetFieldId> out;
  for (const engine::Field& f : schema.fields) {
    SLUICE_ASSIGN_OR_RETURN(engine::ParquetFieldId node,
                            FieldIdNode(f, f.name, schema.metadata, /*struct_field=*/true));
    out.push_back(std::move(node));
  }
  return out;
}

Result<PhysicalRows> ToPhysicalRows(engine::Connection* conn, const engine::Batch& rows,
                                    const DeltaSchema& schema, const Metadata& metadata) {
  SLUICE_ASSIGN_OR_RETURN(ColumnMappingMode mode, ColumnMappingModeOf(metadata));
  PhysicalRows out;
  if (mode == ColumnMappingMode::kNone) {
    out.rows = rows;
    out.schema = rows.schema();
    out.partition_columns = metadata.partition_columns;
    return out;
  }
  SLUICE_ASSIGN_OR_RETURN(engine::Schema physical, PhysicalSchema(schema, mode));
  const engine::Schema& in = rows.schema();
  if (in.size() < physical.size()) {
    return Status::Internal("column mapping: " + std::to_string(in.size()) +
                            " columns to write, the table has " + std::to_string(physical.size()));
  }
  std::string select;
  for (size_t i = 0; i < in.size(); ++i) {
    std::string col = QuoteIdentifier(in[i].name);
    std::string expr = col;
    std::string name = in[i].name;
    if (i < physical.size()) {
      if (!AsciiEqualsIgnoreCase(in[i].name, schema.fields[i].name)) {
        return Status::Internal("column mapping: column " + std::to_string(i) + " to write is '" +
                                in[i].name + "', the table's is '" + schema.fields[i].name + "'");
      }
      // The rows have the logical shape; the files get the physical one (same shape, other
      // struct field names).
      SLUICE_ASSIGN_OR_RETURN(
          expr, PhysicalToLogicalSql("CAST(" + col + " AS " + schema.fields[i].type.ToSql() + ")",
                                     schema.fields[i].type, physical[i].type));
      name = physical[i].name;
      out.schema.push_back(physical[i]);
    } else {
      out.schema.push_back(in[i]);
    }
    select += (select.empty() ? "" : ", ") + expr + " AS " + QuoteIdentifier(name);
  }
  const std::string view = "__sluice_cm_" + NewUuidV4().substr(0, 8);
  SLUICE_RETURN_NOT_OK(conn->RegisterBatch(view, rows));
  auto result = conn->Query("SELECT " + select + " FROM " + QuoteIdentifier(view));
  (void)conn->UnregisterBatch(view);
  SLUICE_ASSIGN_OR_RETURN(out.rows, std::move(result));
  out.partition_columns =
      PhysicalPartitionColumns(schema.fields, physical, metadata.partition_columns);
  SLUICE_ASSIGN_OR_RETURN(out.field_ids, ParquetFieldIds(schema));
  return out;
}

Status AssignColumnMapping(const engine::Schema& fields, bool keep_names,
                           FieldMetadata* field_metadata,
                           std::map<std::string, std::string>* configuration) {
  int64_t max_id = 0;
  auto it = configuration->find("delta.columnMapping.maxColumnId");
  if (it != configuration->end()) max_id = std::strtoll(it->second.c_str(), nullptr, 10);
  // Never reuse an id the schema already holds, whatever maxColumnId says.
  for (const auto& [path, md] : *field_metadata) {
    if (auto id = FieldIdAt(*field_metadata, path); id && *id > max_id) max_id = *id;
  }
  Assigner a{keep_names, field_metadata, max_id};
  for (const engine::Field& f : fields) SLUICE_RETURN_NOT_OK(a.Field(f, ""));
  (*configuration)["delta.columnMapping.maxColumnId"] = std::to_string(a.max_id);
  return Status::OK();
}

}  // namespace sluice::delta
