#include "sql/sink_catalog.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "sql/table_catalog.h"

namespace sluice::sql {
namespace {

constexpr int kFormatVersion = 1;

}  // namespace

std::string SinkDefinitionToJson(const SinkDefinition& def) {
  nlohmann::ordered_json j;
  j["version"] = kFormatVersion;
  j["name"] = def.name;
  j["format"] = def.format;
  j["options"] = def.options;
  if (def.trigger) {
    j["trigger"] = {{"kind", std::string(stream::TriggerKindName(def.trigger->kind))},
                    {"interval_ms", def.trigger->interval_ms}};
  } else {
    j["trigger"] = nullptr;
  }
  return j.dump();
}

Result<SinkDefinition> SinkDefinitionFromJson(const std::string& text, const std::string& what) {
  auto bad = [&](const std::string& why) {
    return Status::Corruption("sink definition " + what + ": " + why);
  };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  if (j.value("version", 0) != kFormatVersion) return bad("unknown format version");
  SinkDefinition d;
  try {
    d.name = j.at("name").get<std::string>();
    d.format = j.at("format").get<std::string>();
    d.options = j.at("options").get<std::map<std::string, std::string>>();
    if (!j.at("trigger").is_null()) {
      Result<stream::TriggerKind> k =
          stream::TriggerKindFromName(j["trigger"].at("kind").get<std::string>());
      if (!k.ok()) return bad(k.status().message());
      d.trigger = stream::Trigger{*k, j["trigger"].at("interval_ms").get<int64_t>()};
    }
  } catch (const std::exception& e) {
    return bad(e.what());
  }
  return d;
}

SinkCatalog::SinkCatalog(std::shared_ptr<fs::FileSystem> fs, std::string warehouse)
    : fs_(std::move(fs)), warehouse_(std::move(warehouse)) {}

std::string SinkCatalog::Dir() const {
  return fs::JoinPath(fs::JoinPath(warehouse_, "_sluice"), "sinks");
}

std::string SinkCatalog::PathOf(const std::string& name) const {
  return fs::JoinPath(Dir(), NormalizeTableName(name) + ".json");
}

Result<std::optional<SinkDefinition>> SinkCatalog::Find(const std::string& name) const {
  const std::string path = PathOf(name);
  Result<std::string> text = fs_->ReadFile(path);
  if (text.status().IsNotFound()) return std::optional<SinkDefinition>();
  if (!text.ok()) return text.status();
  SLUICE_ASSIGN_OR_RETURN(SinkDefinition d, SinkDefinitionFromJson(*text, path));
  return std::optional<SinkDefinition>(std::move(d));
}

Status SinkCatalog::Save(const SinkDefinition& def) {
  fs::WriteOptions options;
  options.owner_only = true;  // Kafka options may hold passwords
  return fs_->AtomicReplace(PathOf(def.name), SinkDefinitionToJson(def) + "\n", options);
}

Status SinkCatalog::Remove(const std::string& name) {
  Status st = fs_->DeleteFile(PathOf(name));
  return st.IsNotFound() ? Status::OK() : st;
}

Result<std::vector<SinkDefinition>> SinkCatalog::List() const {
  std::vector<SinkDefinition> out;
  Result<std::vector<fs::FileInfo>> files = fs_->List(Dir());
  if (files.status().IsNotFound()) return out;
  if (!files.ok()) return files.status();
  for (const auto& f : *files) {
    if (!f.path.ends_with(".json")) continue;
    SLUICE_ASSIGN_OR_RETURN(std::string text, fs_->ReadFile(f.path));
    SLUICE_ASSIGN_OR_RETURN(SinkDefinition d, SinkDefinitionFromJson(text, f.path));
    out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace sluice::sql
