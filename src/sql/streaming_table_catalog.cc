#include "sql/streaming_table_catalog.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "common/redaction.h"
#include "common/secret_reference.h"
#include "plan/stream_query_parser.h"
#include "sql/table_catalog.h"

namespace sluice::sql {
namespace {

constexpr int kFormatVersion = 1;

}  // namespace

Result<sinks::OutputMode> ParseOutputModeName(const std::string& name) {
  for (auto m :
       {sinks::OutputMode::kAppend, sinks::OutputMode::kUpdate, sinks::OutputMode::kComplete}) {
    if (name == sinks::OutputModeName(m)) return m;
  }
  return Status::InvalidArgument("unknown output mode '" + name + "'");
}

bool StreamingDefinition::SameAs(const StreamingDefinition& o) const {
  auto cols = [](const std::vector<ColumnDefinition>& v) {
    std::vector<std::pair<std::string, std::string>> out;
    out.reserve(v.size());
    for (const auto& c : v) out.emplace_back(c.name, c.type_sql);
    return out;
  };
  return kind == o.kind && name == o.name && target == o.target && query == o.query &&
         output_mode == o.output_mode && trigger == o.trigger &&
         schedule_every_ms == o.schedule_every_ms && cols(columns) == cols(o.columns) &&
         partitioned_by == o.partitioned_by && properties == o.properties && sources == o.sources &&
         auto_cdc == o.auto_cdc && expectations == o.expectations;
}

std::string DefinitionToJson(const StreamingDefinition& def) {
  nlohmann::ordered_json j;
  j["version"] = kFormatVersion;
  j["kind"] = def.kind == StreamingDefinition::Kind::kTable ? "table" : "flow";
  j["name"] = def.name;
  j["target"] = def.target;
  j["query"] = def.query ? nlohmann::ordered_json(*def.query) : nlohmann::ordered_json(nullptr);
  j["output_mode"] = sinks::OutputModeName(def.output_mode);
  if (def.trigger) {
    j["trigger"] = {{"kind", std::string(stream::TriggerKindName(def.trigger->kind))},
                    {"interval_ms", def.trigger->interval_ms}};
  } else {
    j["trigger"] = nullptr;
  }
  j["schedule_every_ms"] = def.schedule_every_ms ? nlohmann::ordered_json(*def.schedule_every_ms)
                                                 : nlohmann::ordered_json(nullptr);
  j["columns"] = nlohmann::ordered_json::array();
  for (const auto& c : def.columns) {
    j["columns"].push_back({{"name", c.name}, {"type", c.type_sql}, {"not_null", c.not_null}});
  }
  j["partitioned_by"] = def.partitioned_by;
  j["properties"] = def.properties;
  j["sources"] = nlohmann::ordered_json::array();
  for (const auto& s : def.sources) {
    // A secret option's value is in the query text already: stored there only (a secret()
    // reference, which holds no secret, is kept as it is).
    std::map<std::string, std::string> options = s.options;
    for (auto& [name, value] : options) {
      auto ref = ParseSecretReference(value);
      if (IsSecretOptionName(name) && !(ref.ok() && ref->has_value())) {
        value = std::string(kRedactedValue);
      }
    }
    j["sources"].push_back({{"format", s.format}, {"options", options}});
  }
  if (def.auto_cdc) j["auto_cdc"] = AutoCdcSpecToJson(*def.auto_cdc);
  if (!def.expectations.empty()) j["expectations"] = ExpectationsToJson(def.expectations);
  return j.dump();
}

Result<StreamingDefinition> DefinitionFromJson(const std::string& text, const std::string& what) {
  auto bad = [&](const std::string& why) {
    return Status::Corruption("streaming definition " + what + ": " + why);
  };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  if (j.value("version", 0) != kFormatVersion) return bad("unknown format version");
  StreamingDefinition d;
  try {
    d.kind = j.at("kind").get<std::string>() == "flow" ? StreamingDefinition::Kind::kFlow
                                                       : StreamingDefinition::Kind::kTable;
    d.name = j.at("name").get<std::string>();
    d.target = j.at("target").get<std::string>();
    if (!j.at("query").is_null()) d.query = j.at("query").get<std::string>();
    SLUICE_ASSIGN_OR_RETURN(d.output_mode,
                            ParseOutputModeName(j.at("output_mode").get<std::string>()));
    if (!j.at("trigger").is_null()) {
      SLUICE_ASSIGN_OR_RETURN(
          stream::TriggerKind k,
          stream::TriggerKindFromName(j["trigger"].at("kind").get<std::string>()));
      d.trigger = stream::Trigger{k, j["trigger"].at("interval_ms").get<int64_t>()};
    }
    if (!j.at("schedule_every_ms").is_null()) {
      d.schedule_every_ms = j["schedule_every_ms"].get<int64_t>();
    }
    for (const auto& c : j.at("columns")) {
      ColumnDefinition cd;
      cd.name = c.at("name").get<std::string>();
      cd.type_sql = c.at("type").get<std::string>();
      cd.not_null = c.value("not_null", false);
      d.columns.push_back(std::move(cd));
    }
    d.partitioned_by = j.at("partitioned_by").get<std::vector<std::string>>();
    d.properties = j.at("properties").get<Properties>();
    for (const auto& s : j.at("sources")) {
      d.sources.push_back({s.at("format").get<std::string>(),
                           s.at("options").get<std::map<std::string, std::string>>()});
    }
    // Secret option values stored as kRedactedValue are the query's (DefinitionToJson).
    std::optional<plan::ParsedStreamingQuery> parsed;
    for (size_t i = 0; i < d.sources.size(); ++i) {
      for (auto& [name, value] : d.sources[i].options) {
        if (value != kRedactedValue) continue;
        if (!parsed) {
          Result<plan::ParsedStreamingQuery> p = plan::ParseStreamingQuery(d.query.value_or(""));
          if (!p.ok()) return bad("the query does not parse: " + p.status().message());
          parsed = std::move(p).ValueOrDie();
        }
        if (i >= parsed->streams.size() || parsed->streams[i].named.count(name) == 0) {
          return bad("source " + std::to_string(i) + " option '" + name +
                     "' is not in the query's STREAM relation");
        }
        value = parsed->streams[i].named.at(name);
      }
    }
    if (j.contains("auto_cdc")) {
      Result<AutoCdcSpec> spec = AutoCdcSpecFromJson(j["auto_cdc"]);
      if (!spec.ok()) return bad(spec.status().message());
      d.auto_cdc = std::move(spec).ValueOrDie();
    }
    if (j.contains("expectations")) {
      SLUICE_ASSIGN_OR_RETURN(
          d.expectations, ExpectationsFromJson(j["expectations"], "streaming definition " + what));
    }
  } catch (const std::exception& e) {
    return bad(e.what());
  }
  return d;
}

StreamingTableCatalog::StreamingTableCatalog(std::shared_ptr<fs::FileSystem> fs,
                                             std::string warehouse)
    : fs_(std::move(fs)), warehouse_(std::move(warehouse)) {}

std::string StreamingTableCatalog::DirOf(StreamingDefinition::Kind kind) const {
  return fs::JoinPath(fs::JoinPath(warehouse_, "_sluice"),
                      kind == StreamingDefinition::Kind::kTable ? "streaming_tables" : "flows");
}

std::string StreamingTableCatalog::PathOf(StreamingDefinition::Kind kind,
                                          const std::string& name) const {
  return fs::JoinPath(DirOf(kind), NormalizeTableName(name) + ".json");
}

Result<std::optional<StreamingDefinition>> StreamingTableCatalog::Find(
    StreamingDefinition::Kind kind, const std::string& name) const {
  const std::string path = PathOf(kind, name);
  Result<std::string> text = fs_->ReadFile(path);
  if (text.status().IsNotFound()) return std::optional<StreamingDefinition>();
  if (!text.ok()) return text.status();
  SLUICE_ASSIGN_OR_RETURN(StreamingDefinition d, DefinitionFromJson(*text, path));
  return std::optional<StreamingDefinition>(std::move(d));
}

Status StreamingTableCatalog::Save(const StreamingDefinition& def) {
  // Owner-only: a definition may hold a secret option's value (in its query text).
  fs::WriteOptions options;
  options.owner_only = true;
  return fs_->AtomicReplace(PathOf(def.kind, def.name), DefinitionToJson(def) + "\n", options);
}

Status StreamingTableCatalog::Remove(StreamingDefinition::Kind kind, const std::string& name) {
  Status st = fs_->DeleteFile(PathOf(kind, name));
  return st.IsNotFound() ? Status::OK() : st;
}

Result<std::vector<StreamingDefinition>> StreamingTableCatalog::List(
    StreamingDefinition::Kind kind) const {
  std::vector<StreamingDefinition> out;
  Result<std::vector<fs::FileInfo>> files = fs_->List(DirOf(kind));
  if (files.status().IsNotFound()) return out;
  if (!files.ok()) return files.status();
  for (const auto& f : *files) {
    if (!f.path.ends_with(".json")) continue;
    SLUICE_ASSIGN_OR_RETURN(std::string text, fs_->ReadFile(f.path));
    SLUICE_ASSIGN_OR_RETURN(StreamingDefinition d, DefinitionFromJson(text, f.path));
    out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

std::string StreamingTableCatalog::TableCheckpoint(const std::string& name) const {
  return fs::JoinPath(fs::JoinPath(warehouse_, "_checkpoints"), NormalizeTableName(name));
}

std::string StreamingTableCatalog::CheckpointOf(const StreamingDefinition& def) const {
  if (def.kind == StreamingDefinition::Kind::kTable) return TableCheckpoint(def.name);
  return fs::JoinPath(fs::JoinPath(TableCheckpoint(def.target), "flows"), def.name);
}

}  // namespace sluice::sql
