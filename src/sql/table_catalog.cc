#include "sql/table_catalog.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <nlohmann/json.hpp>

namespace sluice::sql {

std::string NormalizeTableName(const std::string& name) {
  std::string out = name;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

TableCatalog::TableCatalog(std::shared_ptr<fs::FileSystem> fs, std::string warehouse)
    : fs_(std::move(fs)), warehouse_(std::move(warehouse)) {}

std::string TableCatalog::LocationRecordPath(const std::string& lower_name) const {
  return fs::JoinPath(fs::JoinPath(warehouse_, "_sluice/tables"), lower_name + ".json");
}

Result<std::string> TableCatalog::Resolve(const TableName& table) const {
  if (table.is_path) return table.name;
  std::string name = NormalizeTableName(table.name);
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name[0] == '_' || name[0] == '.') {
    return Status::InvalidArgument("invalid table name '" + table.name +
                                   "': names may not be empty, contain '/', or start with '_' "
                                   "or '.'");
  }
  Result<std::string> record = fs_->ReadFile(LocationRecordPath(name));
  if (record.ok()) {
    nlohmann::json j = nlohmann::json::parse(*record, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("location") || !j["location"].is_string()) {
      return Status::Corruption("table location record " + LocationRecordPath(name) +
                                " is not {\"location\": \"...\"}");
    }
    return j["location"].get<std::string>();
  }
  if (!record.status().IsNotFound()) return record.status();
  return fs::JoinPath(warehouse_, name);
}

Result<bool> TableCatalog::Exists(const TableName& table) const {
  SLUICE_ASSIGN_OR_RETURN(std::string path, Resolve(table));
  return fs_->Exists(fs::JoinPath(path, "_delta_log"));
}

Status TableCatalog::RegisterLocation(const std::string& name, const std::string& location) {
  std::string lower = NormalizeTableName(name);
  nlohmann::json j = {{"name", lower}, {"location", location}};
  return fs_->AtomicReplace(LocationRecordPath(lower), j.dump());
}

Status TableCatalog::UnregisterLocation(const std::string& name) {
  Status st = fs_->DeleteFile(LocationRecordPath(NormalizeTableName(name)));
  return st.IsNotFound() ? Status::OK() : st;
}

Result<std::vector<std::string>> TableCatalog::ListTables() const {
  std::set<std::string> names;
  Result<std::vector<fs::FileInfo>> entries = fs_->List(warehouse_);
  if (!entries.ok() && !entries.status().IsNotFound()) return entries.status();
  if (entries.ok()) {
    for (const fs::FileInfo& e : *entries) {
      if (!e.is_directory) continue;
      std::string name = e.path.substr(e.path.find_last_of('/') + 1);
      if (name.empty() || name[0] == '_' || name[0] == '.') continue;
      SLUICE_ASSIGN_OR_RETURN(bool has_log, fs_->Exists(fs::JoinPath(e.path, "_delta_log")));
      if (has_log) names.insert(name);
    }
  }
  Result<std::vector<fs::FileInfo>> records = fs_->List(fs::JoinPath(warehouse_, "_sluice/tables"));
  if (records.ok()) {
    for (const fs::FileInfo& r : *records) {
      std::string file = r.path.substr(r.path.find_last_of('/') + 1);
      if (file.size() > 5 && file.compare(file.size() - 5, 5, ".json") == 0) {
        names.insert(file.substr(0, file.size() - 5));
      }
    }
  }
  return std::vector<std::string>(names.begin(), names.end());
}

}  // namespace sluice::sql
