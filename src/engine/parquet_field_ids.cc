#include "engine/parquet_field_ids.h"

#include <set>

#include "common/strings.h"

namespace sluice::engine {

namespace {

constexpr const char* kReservedKey = "__duckdb_field_id";

Status AppendEntries(const std::vector<ParquetFieldId>& ids, const std::string& where,
                     std::string* out) {
  std::set<std::string> seen;
  bool first = true;
  for (const ParquetFieldId& f : ids) {
    const std::string path = where.empty() ? f.name : where + "." + f.name;
    if (f.name == kReservedKey) {
      return Status::InvalidArgument("Parquet field ids: the field '" + path +
                                     "' has a name the engine reserves");
    }
    if (!seen.insert(f.name).second) {
      return Status::InvalidArgument("Parquet field ids: '" + path + "' is given twice");
    }
    std::string children;
    SLUICE_RETURN_NOT_OK(AppendEntries(f.children, path, &children));
    if (!f.id && children.empty()) continue;  // nothing below it has an id either
    std::string value;
    if (children.empty()) {
      value = std::to_string(*f.id);
    } else {
      value = "{";
      if (f.id) value += std::string(kReservedKey) + ": " + std::to_string(*f.id) + ", ";
      value += children + "}";
    }
    *out += (first ? "" : ", ") + QuoteLiteral(f.name) + ": " + value;
    first = false;
  }
  return Status::OK();
}

}  // namespace

Result<std::string> FieldIdsOptionSql(const std::vector<ParquetFieldId>& ids) {
  if (ids.empty()) return std::string();
  std::string entries;
  SLUICE_RETURN_NOT_OK(AppendEntries(ids, "", &entries));
  if (entries.empty()) return std::string();
  return "{" + entries + "}";
}

}  // namespace sluice::engine
