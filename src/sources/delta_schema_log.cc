#include "sources/delta_schema_log.h"

#include <cctype>
#include <utility>

#include <nlohmann/json.hpp>

namespace sluice::sources {

namespace {

using nlohmann::json;

constexpr std::string_view kVersionLine = "v1";

// The index a file name holds ("12"), or nullopt for other names (".12.crc", "tmp").
std::optional<int64_t> IndexOf(const std::string& name) {
  if (name.empty() || name.size() > 18) return std::nullopt;
  for (char c : name) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  return std::stoll(name);
}

Result<std::string> StringField(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) {
    return Status::Corruption(where + ": schema log entry has no string '" + key + "'");
  }
  return it->get<std::string>();
}

}  // namespace

std::string SerializeSchemaLogEntry(const SchemaLogEntry& entry) {
  json j = json::object();
  j["tableId"] = entry.table_id;
  j["deltaCommitVersion"] = entry.delta_commit_version;
  j["dataSchemaJson"] = entry.data_schema_json;
  j["partitionSchemaJson"] = entry.partition_schema_json;
  j["sourceMetadataPath"] = entry.source_metadata_path;
  j["tableConfigurations"] = entry.table_configurations;
  if (entry.protocol_json) j["protocolJson"] = *entry.protocol_json;
  if (entry.previous_metadata_seq_num)
    j["previousMetadataSeqNum"] = *entry.previous_metadata_seq_num;
  return std::string(kVersionLine) + "\n" + j.dump();
}

Result<SchemaLogEntry> ParseSchemaLogEntry(std::string_view text, const std::string& where) {
  const size_t newline = text.find('\n');
  if (newline == std::string_view::npos || text.substr(0, newline) != kVersionLine) {
    return Status::Corruption(where + ": a schema log entry must start with the line 'v1'");
  }
  json j = json::parse(text.substr(newline + 1), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::Corruption(where + ": schema log entry is not a JSON object");
  SchemaLogEntry e;
  SLUICE_ASSIGN_OR_RETURN(e.table_id, StringField(j, "tableId", where));
  auto v = j.find("deltaCommitVersion");
  if (v == j.end() || !v->is_number_integer()) {
    return Status::Corruption(where + ": schema log entry has no integer 'deltaCommitVersion'");
  }
  e.delta_commit_version = v->get<int64_t>();
  SLUICE_ASSIGN_OR_RETURN(e.data_schema_json, StringField(j, "dataSchemaJson", where));
  SLUICE_ASSIGN_OR_RETURN(e.partition_schema_json, StringField(j, "partitionSchemaJson", where));
  SLUICE_ASSIGN_OR_RETURN(e.source_metadata_path, StringField(j, "sourceMetadataPath", where));
  if (auto c = j.find("tableConfigurations"); c != j.end() && !c->is_null()) {
    if (!c->is_object()) {
      return Status::Corruption(where +
                                ": schema log entry's 'tableConfigurations' is not an "
                                "object");
    }
    for (const auto& [k, val] : c->items()) {
      if (!val.is_string()) {
        return Status::Corruption(where + ": table configuration '" + k + "' is not a string");
      }
      e.table_configurations[k] = val.get<std::string>();
    }
  }
  if (auto p = j.find("protocolJson"); p != j.end() && !p->is_null()) {
    if (!p->is_string()) {
      return Status::Corruption(where + ": schema log entry's 'protocolJson' is not a string");
    }
    e.protocol_json = p->get<std::string>();
  }
  if (auto p = j.find("previousMetadataSeqNum"); p != j.end() && !p->is_null()) {
    if (!p->is_number_integer()) {
      return Status::Corruption(where +
                                ": schema log entry's 'previousMetadataSeqNum' is not an integer");
    }
    e.previous_metadata_seq_num = p->get<int64_t>();
  }
  return e;
}

DeltaSchemaLog::DeltaSchemaLog(std::shared_ptr<fs::FileSystem> fs, std::string location,
                               std::string table_id)
    : fs_(std::move(fs)),
      dir_(fs::JoinPath(location, "_schema_log_" + table_id)),
      table_id_(std::move(table_id)) {}

Result<SchemaLogEntry> DeltaSchemaLog::Get(int64_t index) {
  const std::string path = fs::JoinPath(dir_, std::to_string(index));
  SLUICE_ASSIGN_OR_RETURN(std::string text, fs_->ReadFile(path));
  SLUICE_ASSIGN_OR_RETURN(SchemaLogEntry e, ParseSchemaLogEntry(text, path));
  if (e.table_id != table_id_) {
    return Status::Corruption(path + ": schema log entry of table '" + e.table_id +
                              "' in the log of table '" + table_id_ + "'");
  }
  return e;
}

Result<std::optional<std::pair<int64_t, SchemaLogEntry>>> DeltaSchemaLog::Latest() {
  SLUICE_ASSIGN_OR_RETURN(bool exists, fs_->Exists(dir_));
  if (!exists) return std::optional<std::pair<int64_t, SchemaLogEntry>>();
  SLUICE_ASSIGN_OR_RETURN(auto entries, fs_->List(dir_));
  std::optional<int64_t> newest;
  for (const fs::FileInfo& f : entries) {
    if (f.is_directory) continue;
    auto index = IndexOf(fs::BaseName(f.path));
    if (index && (!newest || *index > *newest)) newest = index;
  }
  if (!newest) return std::optional<std::pair<int64_t, SchemaLogEntry>>();
  SLUICE_ASSIGN_OR_RETURN(SchemaLogEntry e, Get(*newest));
  return std::make_optional(std::make_pair(*newest, std::move(e)));
}

Status DeltaSchemaLog::Append(int64_t index, const SchemaLogEntry& entry) {
  if (entry.table_id != table_id_) {
    return Status::InvalidArgument("schema log of table '" + table_id_ + "': an entry of table '" +
                                   entry.table_id + "'");
  }
  return fs_->CreateIfAbsent(fs::JoinPath(dir_, std::to_string(index)),
                             SerializeSchemaLogEntry(entry));
}

}  // namespace sluice::sources
