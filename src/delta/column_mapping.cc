#include "delta/column_mapping.h"

#include <cctype>
#include <map>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace sluice::delta {

namespace {

using engine::DataType;
using engine::Field;
using engine::TypeId;
using nlohmann::json;

constexpr const char* kPhysicalNameKey = "delta.columnMapping.physicalName";
constexpr const char* kIdKey = "delta.columnMapping.id";

std::optional<json> MetadataJson(const FieldMetadata& metadata, const std::string& path) {
  auto it = metadata.find(path);
  if (it == metadata.end()) return std::nullopt;
  json j = json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  return j;
}

std::string JoinPath(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

Status Rename(DataType* type, const std::string& path, const FieldMetadata& metadata);

Status RenameField(Field* field, const std::string& prefix, const FieldMetadata& metadata) {
  std::string path = JoinPath(prefix, field->name);
  std::optional<std::string> physical = PhysicalNameAt(metadata, path);
  if (!physical || physical->empty()) {
    return Status::Corruption("column mapping: field '" + path + "' has no " + kPhysicalNameKey +
                              " in its metadata");
  }
  SLUICE_RETURN_NOT_OK(Rename(&field->type, path, metadata));
  field->name = *physical;
  return Status::OK();
}

Status Rename(DataType* type, const std::string& path, const FieldMetadata& metadata) {
  switch (type->id) {
    case TypeId::kStruct:
      for (Field& c : type->children) SLUICE_RETURN_NOT_OK(RenameField(&c, path, metadata));
      return Status::OK();
    case TypeId::kList:
    case TypeId::kMap:
      for (Field& c : type->children) {
        SLUICE_RETURN_NOT_OK(Rename(&c.type, JoinPath(path, c.name), metadata));
      }
      return Status::OK();
    default:
      return Status::OK();
  }
}

Result<std::string> Convert(const std::string& expr, const DataType& physical,
                            const DataType& logical, int depth) {
  if (physical == logical) return expr;
  if (physical.id != logical.id || physical.children.size() != logical.children.size()) {
    return Status::InvalidArgument("column mapping: physical type " + physical.ToSql() +
                                   " does not have the shape of " + logical.ToSql());
  }
  std::string var = "__cm" + std::to_string(depth);
  switch (physical.id) {
    case TypeId::kStruct: {
      std::string fields;
      for (size_t i = 0; i < physical.children.size(); ++i) {
        SLUICE_ASSIGN_OR_RETURN(
            std::string child,
            Convert("(" + expr + ")." + QuoteIdentifier(physical.children[i].name),
                    physical.children[i].type, logical.children[i].type, depth + 1));
        if (!fields.empty()) fields += ", ";
        fields += QuoteIdentifier(logical.children[i].name) + " := " + child;
      }
      return "CASE WHEN (" + expr + ") IS NULL THEN NULL ELSE struct_pack(" + fields + ") END";
    }
    case TypeId::kList: {
      SLUICE_ASSIGN_OR_RETURN(std::string element, Convert(var, physical.children[0].type,
                                                           logical.children[0].type, depth + 1));
      return "list_transform(" + expr + ", " + var + " -> " + element + ")";
    }
    case TypeId::kMap: {
      SLUICE_ASSIGN_OR_RETURN(std::string key, Convert(var + ".key", physical.children[0].type,
                                                       logical.children[0].type, depth + 1));
      SLUICE_ASSIGN_OR_RETURN(std::string value, Convert(var + ".value", physical.children[1].type,
                                                         logical.children[1].type, depth + 1));
      return "CASE WHEN (" + expr + ") IS NULL THEN NULL ELSE map_from_entries(list_transform(" +
             "map_entries(" + expr + "), " + var + " -> struct_pack(key := " + key +
             ", value := " + value + "))) END";
    }
    default:
      return Status::InvalidArgument("column mapping: types " + physical.ToSql() + " and " +
                                     logical.ToSql() + " differ");
  }
}

// Physical path -> logical path of every field (element/key/value steps under both).
void CollectPaths(const DataType& type, const std::string& logical, const std::string& physical,
                  const FieldMetadata& metadata,
                  std::vector<std::pair<std::string, std::string>>* out);

void CollectField(const Field& f, const std::string& logical_prefix,
                  const std::string& physical_prefix, const FieldMetadata& metadata,
                  std::vector<std::pair<std::string, std::string>>* out) {
  std::string logical = JoinPath(logical_prefix, f.name);
  std::string physical =
      JoinPath(physical_prefix, PhysicalNameAt(metadata, logical).value_or(f.name));
  out->emplace_back(physical, logical);
  CollectPaths(f.type, logical, physical, metadata, out);
}

void CollectPaths(const DataType& type, const std::string& logical, const std::string& physical,
                  const FieldMetadata& metadata,
                  std::vector<std::pair<std::string, std::string>>* out) {
  if (type.id == TypeId::kStruct) {
    for (const Field& c : type.children) CollectField(c, logical, physical, metadata, out);
  } else if (type.id == TypeId::kList || type.id == TypeId::kMap) {
    for (const Field& c : type.children) {
      CollectPaths(c.type, JoinPath(logical, c.name), JoinPath(physical, c.name), metadata, out);
    }
  }
}

std::vector<std::pair<std::string, std::string>> PathsOf(const DeltaSchema& schema) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Field& f : schema.fields) CollectField(f, "", "", schema.metadata, &out);
  return out;
}

}  // namespace

std::optional<std::string> RenameOrDrop(const DeltaSchema& from, const DeltaSchema& to) {
  auto has_physical = [](const DeltaSchema& s) {
    for (const auto& [path, md] : s.metadata) {
      if (PhysicalNameAt(s.metadata, path)) return true;
    }
    return false;
  };
  if (!has_physical(from) && !has_physical(to)) return std::nullopt;
  std::map<std::string, std::string> to_paths;
  for (auto& [physical, logical] : PathsOf(to)) to_paths.emplace(physical, logical);
  for (const auto& [physical, logical] : PathsOf(from)) {
    auto it = to_paths.find(physical);
    if (it == to_paths.end()) return "column '" + logical + "' was dropped";
    if (it->second != logical) {
      return "column '" + logical + "' was renamed to '" + it->second + "'";
    }
  }
  return std::nullopt;
}

ColumnChanges RenamesAndDrops(const DeltaSchema& from, const DeltaSchema& to) {
  ColumnChanges out;
  std::map<std::string, std::string> to_paths;
  for (auto& [physical, logical] : PathsOf(to)) to_paths.emplace(physical, logical);
  // The last path segment ("a.b" -> "b"): a field whose own name is unchanged moved only
  // because its parent was renamed.
  auto leaf = [](const std::string& path) {
    size_t dot = path.rfind('.');
    return dot == std::string::npos ? path : path.substr(dot + 1);
  };
  std::vector<std::string> dropped_prefixes;
  for (const auto& [physical, logical] : PathsOf(from)) {
    bool under_dropped = false;
    for (const std::string& d : dropped_prefixes) {
      if (logical.rfind(d + ".", 0) == 0) under_dropped = true;
    }
    if (under_dropped) continue;
    auto it = to_paths.find(physical);
    if (it == to_paths.end()) {
      out.dropped.push_back(logical);
      dropped_prefixes.push_back(logical);
    } else if (it->second != logical && leaf(it->second) != leaf(logical)) {
      out.renamed.emplace_back(logical, it->second);
    }
  }
  return out;
}

Result<ColumnMappingMode> ColumnMappingModeOf(const Metadata& metadata) {
  std::optional<std::string> v = metadata.Config("delta.columnMapping.mode");
  if (!v) return ColumnMappingMode::kNone;
  if (AsciiEqualsIgnoreCase(*v, "none")) return ColumnMappingMode::kNone;
  if (AsciiEqualsIgnoreCase(*v, "name")) return ColumnMappingMode::kName;
  if (AsciiEqualsIgnoreCase(*v, "id")) return ColumnMappingMode::kId;
  return Status::NotSupported(
      "Unsupported Delta reader feature 'columnMapping': unknown "
      "delta.columnMapping.mode '" +
      *v + "' (Sluice reads none, name and id)");
}

std::string_view ColumnMappingModeName(ColumnMappingMode mode) {
  switch (mode) {
    case ColumnMappingMode::kName:
      return "name";
    case ColumnMappingMode::kId:
      return "id";
    case ColumnMappingMode::kNone:
      break;
  }
  return "none";
}

std::optional<std::string> PhysicalNameAt(const FieldMetadata& metadata, const std::string& path) {
  std::optional<json> j = MetadataJson(metadata, path);
  if (!j) return std::nullopt;
  auto it = j->find(kPhysicalNameKey);
  if (it == j->end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<int64_t> FieldIdAt(const FieldMetadata& metadata, const std::string& path) {
  std::optional<json> j = MetadataJson(metadata, path);
  if (!j) return std::nullopt;
  auto it = j->find(kIdKey);
  if (it == j->end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

std::map<int64_t, std::string> PhysicalNamesById(const DeltaSchema& schema) {
  std::map<int64_t, std::string> out;
  for (const auto& [path, md] : schema.metadata) {
    std::optional<int64_t> id = FieldIdAt(schema.metadata, path);
    std::optional<std::string> name = PhysicalNameAt(schema.metadata, path);
    if (id && name) out.emplace(*id, *name);
  }
  return out;
}

Result<engine::Schema> PhysicalSchema(const DeltaSchema& schema, ColumnMappingMode mode) {
  engine::Schema out = schema.fields;
  if (mode == ColumnMappingMode::kNone) return out;
  for (Field& f : out) SLUICE_RETURN_NOT_OK(RenameField(&f, "", schema.metadata));
  return out;
}

Result<engine::Schema> PhysicalSchemaOf(const DeltaSchema& schema, const Metadata& metadata) {
  SLUICE_ASSIGN_OR_RETURN(ColumnMappingMode mode, ColumnMappingModeOf(metadata));
  return PhysicalSchema(schema, mode);
}

Result<std::string> PhysicalToLogicalSql(const std::string& expr, const engine::DataType& physical,
                                         const engine::DataType& logical) {
  return Convert(expr, physical, logical, 0);
}

std::optional<std::string> PhysicalColumnName(const engine::Schema& logical,
                                              const engine::Schema& physical,
                                              std::string_view logical_name) {
  for (size_t i = 0; i < logical.size() && i < physical.size(); ++i) {
    if (logical[i].name == logical_name) return physical[i].name;
  }
  for (size_t i = 0; i < logical.size() && i < physical.size(); ++i) {
    if (AsciiEqualsIgnoreCase(logical[i].name, logical_name)) return physical[i].name;
  }
  return std::nullopt;
}

std::vector<std::string> PhysicalPartitionColumns(
    const engine::Schema& logical, const engine::Schema& physical,
    const std::vector<std::string>& partition_columns) {
  std::vector<std::string> out;
  out.reserve(partition_columns.size());
  for (const std::string& p : partition_columns) {
    out.push_back(PhysicalColumnName(logical, physical, p).value_or(p));
  }
  return out;
}

}  // namespace sluice::delta
