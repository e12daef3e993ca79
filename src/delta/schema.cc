#include "delta/schema.h"

#include <cctype>
#include <exception>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace sluice::delta {

using engine::DataType;
using engine::Field;
using engine::TypeId;
using nlohmann::json;

namespace {

struct SchemaError {
  Status status;
};

[[noreturn]] void Corrupt(const std::string& msg) { throw SchemaError{Status::Corruption(msg)}; }

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, e - b + 1));
}

DataType Simple(TypeId id) {
  DataType t;
  t.id = id;
  return t;
}

std::string JoinPath(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

DataType ParseType(const json& t, const std::string& path, FieldMetadata* md);

Field ParseField(const json& f, const std::string& prefix, FieldMetadata* md) {
  if (!f.is_object()) Corrupt("schema field at '" + prefix + "' is not an object");
  auto name_it = f.find("name");
  if (name_it == f.end() || !name_it->is_string())
    Corrupt("schema field under '" + prefix + "' has no name");
  Field field;
  field.name = name_it->get<std::string>();
  std::string path = JoinPath(prefix, field.name);
  auto type_it = f.find("type");
  if (type_it == f.end()) Corrupt("schema field '" + path + "' has no type");
  field.type = ParseType(*type_it, path, md);
  auto nullable_it = f.find("nullable");
  field.nullable = nullable_it == f.end() || !nullable_it->is_boolean() || nullable_it->get<bool>();
  auto md_it = f.find("metadata");
  if (md_it != f.end() && md_it->is_object() && !md_it->empty()) (*md)[path] = md_it->dump();
  return field;
}

DataType ParseType(const json& t, const std::string& path, FieldMetadata* md) {
  if (t.is_string()) {
    auto r = ParseDeltaPrimitive(t.get<std::string>());
    if (!r.ok()) throw SchemaError{r.status().WithContext("column '" + path + "'")};
    return *r;
  }
  if (!t.is_object()) Corrupt("type of '" + path + "' is neither a name nor an object");
  auto kind_it = t.find("type");
  if (kind_it == t.end() || !kind_it->is_string()) Corrupt("type of '" + path + "' has no 'type'");
  std::string kind = kind_it->get<std::string>();
  if (kind == "struct") {
    DataType s = Simple(TypeId::kStruct);
    auto fields = t.find("fields");
    if (fields == t.end() || !fields->is_array())
      Corrupt("struct '" + path + "' has no fields array");
    for (const json& f : *fields) s.children.push_back(ParseField(f, path, md));
    return s;
  }
  if (kind == "array") {
    DataType l = Simple(TypeId::kList);
    auto et = t.find("elementType");
    if (et == t.end()) Corrupt("array '" + path + "' has no elementType");
    Field element;
    element.name = "element";
    element.type = ParseType(*et, JoinPath(path, "element"), md);
    auto cn = t.find("containsNull");
    element.nullable = cn == t.end() || !cn->is_boolean() || cn->get<bool>();
    l.children.push_back(std::move(element));
    return l;
  }
  if (kind == "map") {
    DataType m = Simple(TypeId::kMap);
    auto kt = t.find("keyType");
    auto vt = t.find("valueType");
    if (kt == t.end() || vt == t.end()) Corrupt("map '" + path + "' lacks keyType/valueType");
    Field key;
    key.name = "key";
    key.type = ParseType(*kt, JoinPath(path, "key"), md);
    key.nullable = false;
    Field value;
    value.name = "value";
    value.type = ParseType(*vt, JoinPath(path, "value"), md);
    auto vcn = t.find("valueContainsNull");
    value.nullable = vcn == t.end() || !vcn->is_boolean() || vcn->get<bool>();
    m.children.push_back(std::move(key));
    m.children.push_back(std::move(value));
    return m;
  }
  throw SchemaError{
      Status::NotSupported("unsupported Delta type '" + kind + "' for column '" + path + "'")};
}

struct ToJsonError {
  Status status;
};

json TypeToJson(const DataType& t, const std::string& path, const FieldMetadata& md);

json MetadataFor(const std::string& path, const FieldMetadata& md) {
  auto it = md.find(path);
  if (it == md.end()) return json::object();
  json parsed = json::parse(it->second, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    throw ToJsonError{
        Status::InvalidArgument("metadata of field '" + path + "' is not a JSON object")};
  }
  return parsed;
}

json FieldToJson(const Field& f, const std::string& prefix, const FieldMetadata& md) {
  std::string path = JoinPath(prefix, f.name);
  // nlohmann's ordered_json would keep insertion order; plain json sorts keys, which is still a
  // valid schemaString. Use ordered output to match Spark byte-for-byte.
  json o = json::object();
  o["name"] = f.name;
  o["type"] = TypeToJson(f.type, path, md);
  o["nullable"] = f.nullable;
  o["metadata"] = MetadataFor(path, md);
  return o;
}

json TypeToJson(const DataType& t, const std::string& path, const FieldMetadata& md) {
  switch (t.id) {
    case TypeId::kStruct: {
      json o = json::object();
      o["type"] = "struct";
      json fields = json::array();
      for (const Field& f : t.children) fields.push_back(FieldToJson(f, path, md));
      o["fields"] = fields;
      return o;
    }
    case TypeId::kList: {
      if (t.children.size() != 1)
        throw ToJsonError{Status::InvalidArgument("list '" + path + "' needs 1 child")};
      json o = json::object();
      o["type"] = "array";
      o["elementType"] = TypeToJson(t.children[0].type, JoinPath(path, "element"), md);
      o["containsNull"] = t.children[0].nullable;
      return o;
    }
    case TypeId::kMap: {
      if (t.children.size() != 2)
        throw ToJsonError{Status::InvalidArgument("map '" + path + "' needs 2 children")};
      json o = json::object();
      o["type"] = "map";
      o["keyType"] = TypeToJson(t.children[0].type, JoinPath(path, "key"), md);
      o["valueType"] = TypeToJson(t.children[1].type, JoinPath(path, "value"), md);
      o["valueContainsNull"] = t.children[1].nullable;
      return o;
    }
    default: {
      auto name = DeltaPrimitiveName(t);
      if (!name.ok()) throw ToJsonError{name.status().WithContext("column '" + path + "'")};
      return *name;
    }
  }
}

// Spark writes keys in a fixed order; nlohmann::json sorts them. Rewrite with ordered_json so
// the text matches what Spark produces (name, type, nullable, metadata / type, fields ...).
nlohmann::ordered_json Ordered(const json& j) {
  using oj = nlohmann::ordered_json;
  if (j.is_object()) {
    oj out = oj::object();
    static const char* kOrder[] = {"name",      "type",    "elementType",  "keyType",
                                   "valueType", "fields",  "containsNull", "valueContainsNull",
                                   "nullable",  "metadata"};
    bool is_schema_node = j.contains("type") || j.contains("name");
    if (is_schema_node) {
      for (const char* k : kOrder) {
        auto it = j.find(k);
        if (it == j.end()) continue;
        // metadata content is user data: keep it as is (sorted).
        out[k] = std::string(k) == "metadata" ? oj::parse(it->dump()) : Ordered(*it);
      }
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (!out.contains(it.key())) out[it.key()] = Ordered(it.value());
      }
      return out;
    }
    for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = Ordered(it.value());
    return out;
  }
  if (j.is_array()) {
    oj out = oj::array();
    for (const json& e : j) out.push_back(Ordered(e));
    return out;
  }
  return oj::parse(j.dump());
}

}  // namespace

Result<engine::DataType> ParseDeltaPrimitive(std::string_view raw) {
  std::string name = Trim(raw);
  if (name == "string") return Simple(TypeId::kVarchar);
  if (name == "long") return Simple(TypeId::kBigInt);
  if (name == "integer") return Simple(TypeId::kInteger);
  if (name == "short") return Simple(TypeId::kSmallInt);
  if (name == "byte") return Simple(TypeId::kTinyInt);
  if (name == "float") return Simple(TypeId::kFloat);
  if (name == "double") return Simple(TypeId::kDouble);
  if (name == "boolean") return Simple(TypeId::kBoolean);
  if (name == "binary") return Simple(TypeId::kBlob);
  if (name == "date") return Simple(TypeId::kDate);
  if (name == "timestamp") return Simple(TypeId::kTimestampTz);
  if (name == "timestamp_ntz") return Simple(TypeId::kTimestamp);
  if (name == "void") return Simple(TypeId::kNull);
  if (name == "decimal") {  // Spark's default decimal
    DataType d = Simple(TypeId::kDecimal);
    d.precision = 10;
    d.scale = 0;
    return d;
  }
  if (name.rfind("decimal(", 0) == 0 && name.back() == ')') {
    std::string inner = name.substr(8, name.size() - 9);
    size_t comma = inner.find(',');
    try {
      if (comma == std::string::npos) throw std::invalid_argument("no comma");
      std::string ps = Trim(inner.substr(0, comma));
      std::string ss = Trim(inner.substr(comma + 1));
      size_t pp = 0, sp = 0;
      int p = std::stoi(ps, &pp);
      int s = std::stoi(ss, &sp);
      if (pp != ps.size() || sp != ss.size() || p < 1 || p > 38 || s < 0 || s > p) {
        throw std::invalid_argument("range");
      }
      DataType d = Simple(TypeId::kDecimal);
      d.precision = static_cast<uint8_t>(p);
      d.scale = static_cast<uint8_t>(s);
      return d;
    } catch (const std::exception&) {
      return Status::Corruption("invalid decimal type '" + name + "'");
    }
  }
  return Status::NotSupported("unsupported Delta type '" + name + "'");
}

Result<std::string> DeltaPrimitiveName(const engine::DataType& t) {
  switch (t.id) {
    case TypeId::kVarchar:
      return std::string("string");
    case TypeId::kBigInt:
      return std::string("long");
    case TypeId::kInteger:
      return std::string("integer");
    case TypeId::kSmallInt:
      return std::string("short");
    case TypeId::kTinyInt:
      return std::string("byte");
    case TypeId::kFloat:
      return std::string("float");
    case TypeId::kDouble:
      return std::string("double");
    case TypeId::kBoolean:
      return std::string("boolean");
    case TypeId::kBlob:
      return std::string("binary");
    case TypeId::kDate:
      return std::string("date");
    case TypeId::kTimestampTz:
      return std::string("timestamp");
    case TypeId::kTimestamp:
      return std::string("timestamp_ntz");
    case TypeId::kNull:
      return std::string("void");
    case TypeId::kDecimal:
      return "decimal(" + std::to_string(t.precision) + "," + std::to_string(t.scale) + ")";
    default:
      return Status::InvalidArgument("type " + t.ToSql() + " has no Delta equivalent");
  }
}

Result<DeltaSchema> ParseSchemaString(std::string_view schema_json) {
  try {
    json root = json::parse(schema_json);
    if (!root.is_object() || root.value("type", "") != "struct") {
      return Status::Corruption("schemaString is not a struct type");
    }
    DeltaSchema out;
    DataType top = ParseType(root, "", &out.metadata);
    out.fields = std::move(top.children);
    return out;
  } catch (const SchemaError& e) {
    return e.status;
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("schemaString is not valid JSON: ") + e.what());
  }
}

Result<std::string> SchemaToJson(const engine::Schema& schema, const FieldMetadata& metadata) {
  try {
    DataType top = Simple(TypeId::kStruct);
    top.children = schema;
    json j = TypeToJson(top, "", metadata);
    return Ordered(j).dump(-1, ' ', false, json::error_handler_t::replace);
  } catch (const ToJsonError& e) {
    return e.status;
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("cannot serialize schema: ") + e.what());
  }
}

const engine::Field* FindField(const engine::Schema& schema, std::string_view name) {
  auto eq = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(a[i])) !=
          std::tolower(static_cast<unsigned char>(b[i])))
        return false;
    }
    return true;
  };
  for (const engine::Field& f : schema) {
    if (f.name == name) return &f;
  }
  for (const engine::Field& f : schema) {
    if (eq(f.name, name)) return &f;
  }
  return nullptr;
}

}  // namespace sluice::delta
