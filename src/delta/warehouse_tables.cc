#include "delta/warehouse_tables.h"

#include <set>

#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace sluice::delta {
namespace {

constexpr std::string_view kRecordSuffix = ".json";

}  // namespace

Status CheckWarehouseTableName(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name[0] == '_' || name[0] == '.') {
    return Status::InvalidArgument("invalid table name '" + name +
                                   "': names may not be empty, contain '/', or start with '_' "
                                   "or '.'");
  }
  return Status::OK();
}

std::string LocationRecordPath(const std::string& warehouse, const std::string& lower_name) {
  return fs::JoinPath(fs::JoinPath(warehouse, "_sluice/tables"),
                      lower_name + std::string(kRecordSuffix));
}

Result<std::string> ResolveWarehouseTable(fs::FileSystem* fs, const std::string& warehouse,
                                          const std::string& name) {
  SLUICE_RETURN_NOT_OK(CheckWarehouseTableName(name));
  const std::string lower = AsciiLower(name);
  const std::string record_path = LocationRecordPath(warehouse, lower);
  Result<std::string> record = fs->ReadFile(record_path);
  if (record.ok()) {
    nlohmann::json j = nlohmann::json::parse(*record, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("location") || !j["location"].is_string()) {
      return Status::Corruption("table location record " + record_path +
                                " is not {\"location\": \"...\"}");
    }
    return j["location"].get<std::string>();
  }
  if (!record.status().IsNotFound()) return record.status();
  return fs::JoinPath(warehouse, lower);
}

Status WriteLocationRecord(fs::FileSystem* fs, const std::string& warehouse,
                           const std::string& name, const std::string& location) {
  const std::string lower = AsciiLower(name);
  nlohmann::json j = {{"name", lower}, {"location", location}};
  return fs->AtomicReplace(LocationRecordPath(warehouse, lower), j.dump());
}

Status DeleteLocationRecord(fs::FileSystem* fs, const std::string& warehouse,
                            const std::string& name) {
  Status st = fs->DeleteFile(LocationRecordPath(warehouse, AsciiLower(name)));
  return st.IsNotFound() ? Status::OK() : st;
}

Result<std::vector<std::string>> ListWarehouseTables(fs::FileSystem* fs,
                                                     const std::string& warehouse) {
  std::set<std::string> names;
  Result<std::vector<fs::FileInfo>> entries = fs->List(warehouse);
  if (!entries.ok() && !entries.status().IsNotFound()) return entries.status();
  if (entries.ok()) {
    for (const fs::FileInfo& e : *entries) {
      if (!e.is_directory) continue;
      std::string name = e.path.substr(e.path.find_last_of('/') + 1);
      if (name.empty() || name[0] == '_' || name[0] == '.') continue;
      SLUICE_ASSIGN_OR_RETURN(bool has_log, fs->Exists(fs::JoinPath(e.path, "_delta_log")));
      if (has_log) names.insert(name);
    }
  }
  Result<std::vector<fs::FileInfo>> records = fs->List(fs::JoinPath(warehouse, "_sluice/tables"));
  if (records.ok()) {
    for (const fs::FileInfo& r : *records) {
      std::string file = r.path.substr(r.path.find_last_of('/') + 1);
      if (file.size() > kRecordSuffix.size() && file.ends_with(kRecordSuffix)) {
        names.insert(file.substr(0, file.size() - kRecordSuffix.size()));
      }
    }
  }
  return std::vector<std::string>(names.begin(), names.end());
}

}  // namespace sluice::delta
