#include "state/operator_metadata.h"

#include <cstdint>

#include <nlohmann/json.hpp>

namespace sluice::state {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kVersionLine = "v1\n";

Json FieldsToJson(const std::vector<StateField>& fields) {
  Json arr = Json::array();
  for (const StateField& f : fields) {
    arr.push_back(Json{{"name", f.name},
                       {"type", f.type},
                       {"nullable", f.nullable},
                       {"metadata", Json::object()}});
  }
  return Json{{"type", "struct"}, {"fields", std::move(arr)}};
}

std::vector<StateField> FieldsFromJson(const Json& j) {
  std::vector<StateField> out;
  for (const Json& f : j.at("fields")) {
    out.push_back({f.at("name").get<std::string>(), f.at("type").get<std::string>(),
                   f.at("nullable").get<bool>()});
  }
  return out;
}

// Splits "v1\n<json>"; Corruption naming `path` otherwise.
Result<Json> ParseVersioned(std::string_view bytes, std::string_view path, std::string_view what) {
  if (!bytes.starts_with(kVersionLine)) {
    const size_t nl = bytes.find('\n');
    const std::string first(bytes.substr(0, std::min<size_t>(nl, 16)));
    if (first.size() > 1 && first[0] == 'v') {
      return Status::NotSupported(std::string(path) + ": " + std::string(what) + " version '" +
                                  first + "' is not supported (this build reads v1)");
    }
    return Status::Corruption(std::string(path) + ": not a " + std::string(what) +
                              " file (the first line must be v1)");
  }
  Json j = Json::parse(bytes.substr(kVersionLine.size()), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Corruption(std::string(path) + ": the " + std::string(what) +
                              " is not a JSON object (torn or damaged file)");
  }
  return j;
}

// An integer member in [lo, hi]. Anything else (absent, a float such as 1e300, a string, out of
// range) throws json::type_error, which the decoders turn into Corruption. Never casts a float.
int64_t IntMember(const Json& j, const char* key, int64_t lo, int64_t hi) {
  const Json& v = j.at(key);
  if (v.is_number_integer()) {
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      if (u <= static_cast<uint64_t>(hi) && static_cast<int64_t>(u) >= lo) {
        return static_cast<int64_t>(u);
      }
    } else {
      const int64_t i = v.get<int64_t>();
      if (i >= lo && i <= hi) return i;
    }
  }
  throw nlohmann::json::type_error::create(302,
                                           std::string("\"") + key + "\" must be an integer in [" +
                                               std::to_string(lo) + ", " + std::to_string(hi) + "]",
                                           &v);
}

std::string Describe(const StateField& f) {
  return "`" + f.name + "` " + f.type + (f.nullable ? "" : " NOT NULL");
}

// Differences of one side (key or value), as plain phrases.
std::vector<std::string> Differences(const std::vector<StateField>& stored,
                                     const std::vector<StateField>& query) {
  std::vector<std::string> out;
  if (stored.size() != query.size()) {
    out.push_back("it had " + std::to_string(stored.size()) + " field(s), now " +
                  std::to_string(query.size()));
  }
  const size_t n = std::min(stored.size(), query.size());
  for (size_t i = 0; i < n; ++i) {
    const StateField& a = stored[i];
    const StateField& b = query[i];
    if (a.name != b.name || a.type != b.type || (a.nullable && !b.nullable)) {
      out.push_back("field " + std::to_string(i + 1) + " was " + Describe(a) + ", now " +
                    Describe(b));
    }
  }
  for (size_t i = n; i < stored.size(); ++i) {
    out.push_back("field " + std::to_string(i + 1) + " " + Describe(stored[i]) + " is gone");
  }
  for (size_t i = n; i < query.size(); ++i) {
    out.push_back("field " + std::to_string(i + 1) + " " + Describe(query[i]) + " is new");
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i > 0 ? "; " : "") + parts[i];
  return s;
}

}  // namespace

std::string OperatorMetadataPath(std::string_view checkpoint_root, int64_t operator_id) {
  return fs::JoinPath(
      fs::JoinPath(fs::JoinPath(checkpoint_root, "state"), std::to_string(operator_id)),
      "_metadata/metadata");
}

std::string StateSchemaPath(std::string_view checkpoint_root, int64_t operator_id,
                            std::string_view store_name) {
  std::string dir = fs::JoinPath(
      fs::JoinPath(fs::JoinPath(checkpoint_root, "state"), std::to_string(operator_id)), "0");
  if (store_name != "default") dir = fs::JoinPath(dir, store_name);
  return fs::JoinPath(dir, "_metadata/schema");
}

std::string EncodeOperatorMetadata(const OperatorMetadata& m) {
  Json stores = Json::array();
  for (const StateStoreInfo& s : m.stores) {
    stores.push_back(Json{{"storeName", s.store_name},
                          {"numColsPrefixKey", s.num_cols_prefix_key},
                          {"numPartitions", s.num_partitions}});
  }
  Json j{{"operatorInfo", Json{{"operatorId", m.operator_id}, {"operatorName", m.operator_name}}},
         {"stateStoreInfo", std::move(stores)}};
  return std::string(kVersionLine) + j.dump();
}

Result<OperatorMetadata> DecodeOperatorMetadata(std::string_view bytes, std::string_view path) {
  SLUICE_ASSIGN_OR_RETURN(Json j, ParseVersioned(bytes, path, "operator metadata"));
  try {
    OperatorMetadata m;
    const Json& info = j.at("operatorInfo");
    m.operator_id = IntMember(info, "operatorId", 0, INT64_MAX);
    m.operator_name = info.at("operatorName").get<std::string>();
    for (const Json& s : j.at("stateStoreInfo")) {
      m.stores.push_back({s.at("storeName").get<std::string>(),
                          static_cast<int32_t>(IntMember(s, "numColsPrefixKey", 0, INT32_MAX)),
                          static_cast<int32_t>(IntMember(s, "numPartitions", 1, INT32_MAX))});
    }
    return m;
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(std::string(path) + ": bad operator metadata: " + e.what());
  }
}

std::string EncodeStateSchema(std::string_view operator_name, std::string_view store_name,
                              const StateSchema& schema) {
  Json j{{"operatorName", operator_name},
         {"storeName", store_name},
         {"keySchema", FieldsToJson(schema.key)},
         {"valueSchema", FieldsToJson(schema.value)}};
  return std::string(kVersionLine) + j.dump();
}

Result<StateSchema> DecodeStateSchema(std::string_view bytes, std::string_view path) {
  SLUICE_ASSIGN_OR_RETURN(Json j, ParseVersioned(bytes, path, "state schema"));
  try {
    StateSchema s;
    s.key = FieldsFromJson(j.at("keySchema"));
    s.value = FieldsFromJson(j.at("valueSchema"));
    return s;
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(std::string(path) + ": bad state schema: " + e.what());
  }
}

Result<OperatorMetadata> WriteOrCheckOperatorMetadata(fs::FileSystem& fs,
                                                      std::string_view checkpoint_root,
                                                      const OperatorMetadata& expected) {
  const std::string path = OperatorMetadataPath(checkpoint_root, expected.operator_id);
  Status created = fs.CreateIfAbsent(path, EncodeOperatorMetadata(expected));
  if (created.ok()) return expected;
  if (!created.IsAlreadyExists()) return created;
  SLUICE_ASSIGN_OR_RETURN(std::string bytes, fs.ReadFile(path));
  SLUICE_ASSIGN_OR_RETURN(OperatorMetadata stored, DecodeOperatorMetadata(bytes, path));
  const std::string op = "stateful operator " + std::to_string(expected.operator_id);
  const std::string advice =
      ". The checkpoint was written by a different query: restore the previous query, or start "
      "this one from a new checkpoint location";
  if (stored.operator_id != expected.operator_id) {
    return Status::Corruption(path + " describes operator " + std::to_string(stored.operator_id));
  }
  if (stored.operator_name != expected.operator_name) {
    return Status::InvalidArgument(op + " is '" + expected.operator_name + "' in this query but '" +
                                   stored.operator_name + "' in the checkpoint (" + path +
                                   "): the stateful operators changed or were reordered "
                                   "(STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA)" +
                                   advice);
  }
  std::vector<std::string> diffs;
  if (stored.stores.size() != expected.stores.size()) {
    diffs.push_back("it had " + std::to_string(stored.stores.size()) + " state store(s), now " +
                    std::to_string(expected.stores.size()));
  }
  for (size_t i = 0; i < std::min(stored.stores.size(), expected.stores.size()); ++i) {
    const StateStoreInfo& a = stored.stores[i];
    const StateStoreInfo& b = expected.stores[i];
    if (a.store_name != b.store_name) {
      diffs.push_back("store " + std::to_string(i) + " was '" + a.store_name + "', now '" +
                      b.store_name + "'");
    }
    if (a.num_partitions != b.num_partitions) {
      diffs.push_back("store '" + a.store_name + "' has " + std::to_string(a.num_partitions) +
                      " partitions in the checkpoint, the query asks for " +
                      std::to_string(b.num_partitions) +
                      " (the number of state partitions is fixed when the checkpoint is created)");
    }
    if (a.num_cols_prefix_key != b.num_cols_prefix_key) {
      diffs.push_back("store '" + a.store_name + "' had " + std::to_string(a.num_cols_prefix_key) +
                      " prefix key column(s), now " + std::to_string(b.num_cols_prefix_key));
    }
  }
  if (!diffs.empty()) {
    return Status::InvalidArgument(op + " ('" + expected.operator_name +
                                   "') does not match its state metadata in " + path + ": " +
                                   Join(diffs) + advice);
  }
  return stored;
}

Status CheckStateSchemaCompatible(std::string_view operator_description, const StateSchema& stored,
                                  const StateSchema& query) {
  const auto key_diffs = Differences(stored.key, query.key);
  const auto value_diffs = Differences(stored.value, query.value);
  if (key_diffs.empty() && value_diffs.empty()) return Status::OK();
  std::string msg = "the state of " + std::string(operator_description) +
                    " in the checkpoint is not compatible with this query:";
  if (!key_diffs.empty()) {
    msg +=
        " the state key changed (" + Join(key_diffs) + ") (STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE)";
  }
  if (!value_diffs.empty()) {
    msg += std::string(key_diffs.empty() ? "" : ";") + " the state value changed (" +
           Join(value_diffs) + ") (STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE)";
  }
  msg +=
      ". A changed grouping key, aggregate list, deduplication columns or join changes the "
      "state; start this query from a new checkpoint location or restore the previous query";
  return Status::InvalidArgument(std::move(msg));
}

Status WriteOrCheckStateSchema(fs::FileSystem& fs, std::string_view checkpoint_root,
                               int64_t operator_id, std::string_view operator_name,
                               std::string_view store_name, const StateSchema& schema) {
  const std::string path = StateSchemaPath(checkpoint_root, operator_id, store_name);
  Status created = fs.CreateIfAbsent(path, EncodeStateSchema(operator_name, store_name, schema));
  if (created.ok()) return Status::OK();
  if (!created.IsAlreadyExists()) return created;
  SLUICE_ASSIGN_OR_RETURN(std::string bytes, fs.ReadFile(path));
  SLUICE_ASSIGN_OR_RETURN(StateSchema stored, DecodeStateSchema(bytes, path));
  std::string desc =
      "operator " + std::to_string(operator_id) + " ('" + std::string(operator_name) + "'";
  if (store_name != "default") desc += ", store '" + std::string(store_name) + "'";
  desc += ", " + path + ")";
  return CheckStateSchemaCompatible(desc, stored, schema);
}

}  // namespace sluice::state
