#include "delta/actions.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <utility>

#include <nlohmann/json.hpp>

namespace sluice::delta {

// ordered_json keeps keys in insertion order, so serialized actions read like Spark's.
using json = nlohmann::ordered_json;

namespace {

// Thrown inside this file only; converted to Corruption at the parse boundary.
struct ParseError {
  std::string message;
};

[[noreturn]] void Fail(std::string msg) { throw ParseError{std::move(msg)}; }

const json* Find(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

const json& Require(const json& obj, const char* key, std::string_view action) {
  const json* v = Find(obj, key);
  if (v == nullptr) Fail(std::string(action) + " action is missing required field '" + key + "'");
  return *v;
}

std::string GetString(const json& v, const char* what) {
  if (!v.is_string()) Fail(std::string("field '") + what + "' is not a string: " + v.dump());
  return v.get<std::string>();
}

int64_t GetInt(const json& v, const char* what) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    // Out-of-range (or NaN) doubles cannot be converted (undefined behavior): refuse them.
    double d = v.get<double>();
    if (d >= -9.2233720368547758e18 && d < 9.2233720368547758e18) return static_cast<int64_t>(d);
  }
  // Some writers put numbers in strings; accept them.
  if (v.is_string()) {
    try {
      size_t pos = 0;
      std::string s = v.get<std::string>();
      int64_t n = std::stoll(s, &pos);
      if (pos == s.size()) return n;
    } catch (const std::exception&) {
    }
  }
  Fail(std::string("field '") + what + "' is not an integer: " + v.dump());
}

bool GetBool(const json& v, const char* what) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (s == "true") return true;
    if (s == "false") return false;
  }
  Fail(std::string("field '") + what + "' is not a boolean: " + v.dump());
}

std::optional<std::string> OptString(const json& obj, const char* key) {
  const json* v = Find(obj, key);
  if (v == nullptr) return std::nullopt;
  return GetString(*v, key);
}

std::optional<int64_t> OptInt(const json& obj, const char* key) {
  const json* v = Find(obj, key);
  if (v == nullptr) return std::nullopt;
  return GetInt(*v, key);
}

// A value of a string map: strings as is, null as nullopt, anything else as its JSON text.
std::optional<std::string> MapValue(const json& v) {
  if (v.is_null()) return std::nullopt;
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::map<std::string, std::optional<std::string>> OptStringMap(const json& obj, const char* key) {
  std::map<std::string, std::optional<std::string>> out;
  const json* v = Find(obj, key);
  if (v == nullptr) return out;
  if (v->is_object()) {
    for (auto it = v->begin(); it != v->end(); ++it) out[it.key()] = MapValue(it.value());
  } else if (v->is_array()) {
    // Some engines render map<string,string> as [{"key":..,"value":..}].
    for (const json& kv : *v) {
      if (!kv.is_object() || !kv.contains("key"))
        Fail(std::string("bad map entry in '") + key + "'");
      out[GetString(kv.at("key"), key)] =
          kv.contains("value") ? MapValue(kv.at("value")) : std::nullopt;
    }
  } else {
    Fail(std::string("field '") + key + "' is not an object: " + v->dump());
  }
  return out;
}

std::map<std::string, std::string> NonNullStringMap(const json& obj, const char* key) {
  std::map<std::string, std::string> out;
  for (auto& [k, v] : OptStringMap(obj, key)) {
    if (v.has_value()) out[k] = *v;
  }
  return out;
}

std::optional<std::vector<std::string>> OptStringList(const json& obj, const char* key) {
  const json* v = Find(obj, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_array()) Fail(std::string("field '") + key + "' is not an array");
  std::vector<std::string> out;
  for (const json& e : *v) out.push_back(GetString(e, key));
  return out;
}

std::optional<DeletionVector> OptDv(const json& obj) {
  const json* v = Find(obj, "deletionVector");
  if (v == nullptr) return std::nullopt;
  if (!v->is_object()) Fail("field 'deletionVector' is not an object");
  DeletionVector dv;
  dv.storage_type = GetString(Require(*v, "storageType", "deletionVector"), "storageType");
  dv.path_or_inline_dv =
      GetString(Require(*v, "pathOrInlineDv", "deletionVector"), "pathOrInlineDv");
  if (auto off = OptInt(*v, "offset")) dv.offset = static_cast<int32_t>(*off);
  dv.size_in_bytes =
      static_cast<int32_t>(GetInt(Require(*v, "sizeInBytes", "deletionVector"), "sizeInBytes"));
  dv.cardinality = GetInt(Require(*v, "cardinality", "deletionVector"), "cardinality");
  return dv;
}

std::optional<std::string> StatsOf(const json& obj) {
  if (auto s = OptString(obj, "stats")) return s;
  if (const json* parsed = Find(obj, "stats_parsed")) return parsed->dump();
  return std::nullopt;
}

Protocol ParseProtocol(const json& o) {
  Protocol p;
  p.min_reader_version =
      static_cast<int32_t>(GetInt(Require(o, "minReaderVersion", "protocol"), "minReaderVersion"));
  p.min_writer_version =
      static_cast<int32_t>(GetInt(Require(o, "minWriterVersion", "protocol"), "minWriterVersion"));
  p.reader_features = OptStringList(o, "readerFeatures");
  p.writer_features = OptStringList(o, "writerFeatures");
  return p;
}

Metadata ParseMetadata(const json& o) {
  Metadata m;
  m.id = GetString(Require(o, "id", "metaData"), "id");
  m.name = OptString(o, "name");
  m.description = OptString(o, "description");
  if (const json* f = Find(o, "format")) {
    if (auto provider = OptString(*f, "provider")) m.format.provider = *provider;
    m.format.options = NonNullStringMap(*f, "options");
  }
  m.schema_string = OptString(o, "schemaString").value_or("");
  m.partition_columns = OptStringList(o, "partitionColumns").value_or(std::vector<std::string>{});
  m.configuration = NonNullStringMap(o, "configuration");
  m.created_time = OptInt(o, "createdTime");
  return m;
}

AddFile ParseAdd(const json& o) {
  AddFile a;
  a.path = GetString(Require(o, "path", "add"), "path");
  a.partition_values = OptStringMap(o, "partitionValues");
  a.size = GetInt(Require(o, "size", "add"), "size");
  a.modification_time = GetInt(Require(o, "modificationTime", "add"), "modificationTime");
  a.data_change = GetBool(Require(o, "dataChange", "add"), "dataChange");
  a.stats = StatsOf(o);
  a.tags = OptStringMap(o, "tags");
  a.deletion_vector = OptDv(o);
  a.base_row_id = OptInt(o, "baseRowId");
  a.default_row_commit_version = OptInt(o, "defaultRowCommitVersion");
  a.clustering_provider = OptString(o, "clusteringProvider");
  return a;
}

RemoveFile ParseRemove(const json& o) {
  RemoveFile r;
  r.path = GetString(Require(o, "path", "remove"), "path");
  r.deletion_timestamp = OptInt(o, "deletionTimestamp");
  // dataChange is required by the protocol, but the oldest logs (delta 0.1.0) omit it.
  const json* dc = Find(o, "dataChange");
  r.data_change = dc == nullptr ? true : GetBool(*dc, "dataChange");
  if (const json* e = Find(o, "extendedFileMetadata"))
    r.extended_file_metadata = GetBool(*e, "extendedFileMetadata");
  if (Find(o, "partitionValues") != nullptr)
    r.partition_values = OptStringMap(o, "partitionValues");
  r.size = OptInt(o, "size");
  r.stats = StatsOf(o);
  r.tags = OptStringMap(o, "tags");
  r.deletion_vector = OptDv(o);
  r.base_row_id = OptInt(o, "baseRowId");
  r.default_row_commit_version = OptInt(o, "defaultRowCommitVersion");
  return r;
}

AddCdcFile ParseCdc(const json& o) {
  AddCdcFile c;
  c.path = GetString(Require(o, "path", "cdc"), "path");
  c.partition_values = OptStringMap(o, "partitionValues");
  c.size = OptInt(o, "size").value_or(0);
  if (const json* dc = Find(o, "dataChange")) c.data_change = GetBool(*dc, "dataChange");
  c.tags = OptStringMap(o, "tags");
  return c;
}

SetTransaction ParseTxn(const json& o) {
  SetTransaction t;
  t.app_id = GetString(Require(o, "appId", "txn"), "appId");
  t.version = GetInt(Require(o, "version", "txn"), "version");
  t.last_updated = OptInt(o, "lastUpdated");
  return t;
}

DomainMetadata ParseDomain(const json& o) {
  DomainMetadata d;
  d.domain = GetString(Require(o, "domain", "domainMetadata"), "domain");
  const json* c = Find(o, "configuration");
  d.configuration = c == nullptr ? "" : (c->is_string() ? c->get<std::string>() : c->dump());
  if (const json* r = Find(o, "removed")) d.removed = GetBool(*r, "removed");
  return d;
}

CommitInfo ParseCommitInfo(const json& o) {
  CommitInfo c;
  c.raw_json = o.dump();
  if (!o.is_object()) return c;
  // commitInfo is free-form: tolerate odd types by ignoring them.
  if (const json* t = Find(o, "timestamp"); t != nullptr && t->is_number())
    c.timestamp = t->get<int64_t>();
  if (const json* op = Find(o, "operation"); op != nullptr && op->is_string())
    c.operation = op->get<std::string>();
  if (const json* t = Find(o, "inCommitTimestamp"); t != nullptr && t->is_number()) {
    c.in_commit_timestamp = t->get<int64_t>();
  }
  return c;
}

void ParseObject(const json& obj, std::vector<Action>* out) {
  if (!obj.is_object()) Fail("expected a JSON object, got " + std::string(obj.type_name()));
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    if (v.is_null()) continue;
    if (key == "commitInfo") {
      out->push_back(ParseCommitInfo(v));
      continue;
    }
    bool known = key == "add" || key == "remove" || key == "metaData" || key == "protocol" ||
                 key == "cdc" || key == "txn" || key == "domainMetadata";
    if (!known) continue;  // unknown actions are ignored
    if (!v.is_object()) Fail("action '" + key + "' is not an object");
    if (key == "add")
      out->push_back(ParseAdd(v));
    else if (key == "remove")
      out->push_back(ParseRemove(v));
    else if (key == "metaData")
      out->push_back(ParseMetadata(v));
    else if (key == "protocol")
      out->push_back(ParseProtocol(v));
    else if (key == "cdc")
      out->push_back(ParseCdc(v));
    else if (key == "txn")
      out->push_back(ParseTxn(v));
    else
      out->push_back(ParseDomain(v));
  }
}

// ---- serialization ----

json MapToJson(const std::map<std::string, std::optional<std::string>>& m) {
  json o = json::object();
  for (const auto& [k, v] : m) o[k] = v.has_value() ? json(*v) : json(nullptr);
  return o;
}

json DvToJson(const DeletionVector& dv) {
  json o = json::object();
  o["storageType"] = dv.storage_type;
  o["pathOrInlineDv"] = dv.path_or_inline_dv;
  if (dv.offset) o["offset"] = *dv.offset;
  o["sizeInBytes"] = dv.size_in_bytes;
  o["cardinality"] = dv.cardinality;
  return o;
}

json ToJson(const Protocol& p) {
  json o = json::object();
  o["minReaderVersion"] = p.min_reader_version;
  o["minWriterVersion"] = p.min_writer_version;
  if (p.reader_features) o["readerFeatures"] = *p.reader_features;
  if (p.writer_features) o["writerFeatures"] = *p.writer_features;
  return o;
}

json ToJson(const Metadata& m) {
  json o = json::object();
  o["id"] = m.id;
  o["name"] = m.name ? json(*m.name) : json(nullptr);
  o["description"] = m.description ? json(*m.description) : json(nullptr);
  json format = json::object();
  format["provider"] = m.format.provider;
  format["options"] = json(m.format.options);
  o["format"] = format;
  o["schemaString"] = m.schema_string;
  o["partitionColumns"] = m.partition_columns;
  o["configuration"] = json(m.configuration);
  if (m.created_time) o["createdTime"] = *m.created_time;
  return o;
}

json ToJson(const AddFile& a) {
  json o = json::object();
  o["path"] = a.path;
  o["partitionValues"] = MapToJson(a.partition_values);
  o["size"] = a.size;
  o["modificationTime"] = a.modification_time;
  o["dataChange"] = a.data_change;
  if (a.stats) o["stats"] = *a.stats;
  if (!a.tags.empty()) o["tags"] = MapToJson(a.tags);
  if (a.deletion_vector) o["deletionVector"] = DvToJson(*a.deletion_vector);
  if (a.base_row_id) o["baseRowId"] = *a.base_row_id;
  if (a.default_row_commit_version) o["defaultRowCommitVersion"] = *a.default_row_commit_version;
  if (a.clustering_provider) o["clusteringProvider"] = *a.clustering_provider;
  return o;
}

json ToJson(const RemoveFile& r) {
  json o = json::object();
  o["path"] = r.path;
  if (r.deletion_timestamp) o["deletionTimestamp"] = *r.deletion_timestamp;
  o["dataChange"] = r.data_change;
  if (r.extended_file_metadata) o["extendedFileMetadata"] = *r.extended_file_metadata;
  if (r.partition_values) o["partitionValues"] = MapToJson(*r.partition_values);
  if (r.size) o["size"] = *r.size;
  if (r.stats) o["stats"] = *r.stats;
  if (!r.tags.empty()) o["tags"] = MapToJson(r.tags);
  if (r.deletion_vector) o["deletionVector"] = DvToJson(*r.deletion_vector);
  if (r.base_row_id) o["baseRowId"] = *r.base_row_id;
  if (r.default_row_commit_version) o["defaultRowCommitVersion"] = *r.default_row_commit_version;
  return o;
}

json ToJson(const AddCdcFile& c) {
  json o = json::object();
  o["path"] = c.path;
  o["partitionValues"] = MapToJson(c.partition_values);
  o["size"] = c.size;
  o["dataChange"] = c.data_change;
  if (!c.tags.empty()) o["tags"] = MapToJson(c.tags);
  return o;
}

json ToJson(const SetTransaction& t) {
  json o = json::object();
  o["appId"] = t.app_id;
  o["version"] = t.version;
  if (t.last_updated) o["lastUpdated"] = *t.last_updated;
  return o;
}

json ToJson(const DomainMetadata& d) {
  json o = json::object();
  o["domain"] = d.domain;
  o["configuration"] = d.configuration;
  o["removed"] = d.removed;
  return o;
}

json ToJson(const CommitInfo& c) {
  json o = json::parse(c.raw_json.empty() ? std::string("{}") : c.raw_json, nullptr, false);
  if (o.is_discarded() || !o.is_object()) o = json::object();
  // The typed fields win over the raw text, so a writer can fill in just those.
  if (c.in_commit_timestamp) o["inCommitTimestamp"] = *c.in_commit_timestamp;
  if (c.timestamp) o["timestamp"] = *c.timestamp;
  if (c.operation) o["operation"] = *c.operation;
  return o;
}

}  // namespace

std::optional<std::string> Metadata::Config(const std::string& key) const {
  auto it = configuration.find(key);
  if (it == configuration.end()) return std::nullopt;
  return it->second;
}

bool Metadata::ConfigIsTrue(const std::string& key) const {
  auto v = Config(key);
  if (!v) return false;
  std::string s = *v;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s == "true";
}

std::string DeletionVector::UniqueId() const {
  std::string id = storage_type + path_or_inline_dv;
  if (offset) id += "@" + std::to_string(*offset);
  return id;
}

Result<std::vector<Action>> ParseActions(std::string_view json_object) {
  try {
    json obj = json::parse(json_object);
    std::vector<Action> out;
    ParseObject(obj, &out);
    return out;
  } catch (const ParseError& e) {
    return Status::Corruption(e.message);
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("invalid JSON: ") + e.what());
  }
}

Result<std::map<std::string, std::optional<std::string>>> ParseStringMapJson(
    std::string_view json_text, std::string_view field) {
  try {
    json wrapper = json::object();
    std::string key(field);
    wrapper[key] = json::parse(json_text);
    return OptStringMap(wrapper, key.c_str());
  } catch (const ParseError& e) {
    return Status::Corruption(e.message);
  } catch (const std::exception& e) {
    return Status::Corruption("invalid JSON in '" + std::string(field) + "': " + e.what());
  }
}

Result<std::vector<Action>> ParseCommitFile(std::string_view contents, std::string_view file_name) {
  std::vector<Action> out;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < contents.size()) {
    size_t end = contents.find('\n', pos);
    if (end == std::string_view::npos) end = contents.size();
    std::string_view line = contents.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto parsed = ParseActions(line);
    if (!parsed.ok()) {
      return parsed.status().WithContext(std::string(file_name) + " line " +
                                         std::to_string(line_no));
    }
    for (Action& a : *parsed) out.push_back(std::move(a));
  }
  return out;
}

std::string_view ActionName(const Action& action) {
  struct Visitor {
    std::string_view operator()(const Protocol&) const { return "protocol"; }
    std::string_view operator()(const Metadata&) const { return "metaData"; }
    std::string_view operator()(const AddFile&) const { return "add"; }
    std::string_view operator()(const RemoveFile&) const { return "remove"; }
    std::string_view operator()(const AddCdcFile&) const { return "cdc"; }
    std::string_view operator()(const SetTransaction&) const { return "txn"; }
    std::string_view operator()(const DomainMetadata&) const { return "domainMetadata"; }
    std::string_view operator()(const CommitInfo&) const { return "commitInfo"; }
  };
  return std::visit(Visitor{}, action);
}

std::string SerializeAction(const Action& action) {
  json body = std::visit([](const auto& a) { return ToJson(a); }, action);
  json wrapper = json::object();
  wrapper[std::string(ActionName(action))] = std::move(body);
  // Invalid UTF-8 in user strings is replaced rather than thrown.
  return wrapper.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string SerializeCommit(const std::vector<Action>& actions) {
  std::string out;
  for (const Action& a : actions) {
    out += SerializeAction(a);
    out += '\n';
  }
  return out;
}

}  // namespace sluice::delta
