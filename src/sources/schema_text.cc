#include "sources/schema_text.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "sources/source_options.h"
#include "sources/source_util.h"

namespace sluice::sources {

Result<engine::Schema> ParseSchemaText(engine::Connection* conn, std::string_view text,
                                       std::string_view option) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("option '" + std::string(option) + "': " + why + " in '" +
                                   std::string(text) + "'");
  };
  // Split at top-level commas.
  std::vector<std::string> parts;
  int depth = 0;
  bool quoted = false;
  std::string cur;
  for (char c : text) {
    if (c == '"') quoted = !quoted;
    if (!quoted && (c == '(' || c == '<' || c == '[')) ++depth;
    if (!quoted && (c == ')' || c == '>' || c == ']')) --depth;
    if (!quoted && depth == 0 && c == ',') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  if (quoted || depth != 0) return bad("unbalanced quotes or brackets");
  std::string sql = "SELECT ";
  std::vector<std::string> names;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string p = Trim(parts[i]);
    if (p.empty()) return bad("empty column definition");
    std::string name, type;
    if (p[0] == '"') {
      size_t end = 1;
      while (end < p.size()) {
        if (p[end] == '"' && (end + 1 >= p.size() || p[end + 1] != '"')) break;
        if (p[end] == '"') ++end;
        ++end;
      }
      if (end >= p.size()) return bad("unterminated quoted name");
      for (size_t k = 1; k < end; ++k) {
        name += p[k];
        if (p[k] == '"') ++k;
      }
      type = Trim(std::string_view(p).substr(end + 1));
    } else {
      size_t sp = 0;
      while (sp < p.size() && !std::isspace(static_cast<unsigned char>(p[sp]))) ++sp;
      name = p.substr(0, sp);
      type = Trim(std::string_view(p).substr(sp));
    }
    if (name.empty() || type.empty()) return bad("column '" + p + "' needs a name and a type");
    const std::string upper = AsciiUpper(type);
    if (upper == "TIMESTAMP")
      type = "TIMESTAMPTZ";
    else if (upper == "TIMESTAMP_NTZ")
      type = "TIMESTAMP";
    else if (upper == "LONG")
      type = "BIGINT";
    if (type.find(';') != std::string::npos) return bad("invalid type '" + type + "'");
    for (const auto& n : names) {
      if (AsciiLower(n) == AsciiLower(name)) return bad("duplicate column '" + name + "'");
    }
    names.push_back(name);
    sql += (i ? ", " : "") + std::string("CAST(NULL AS ") + type + ") AS " + QuoteIdentifier(name);
  }
  sql += " LIMIT 0";
  auto batch = conn->Query(sql);
  if (!batch.ok()) return bad(batch.status().message());
  return batch->schema();
}

std::string SchemaToJson(const engine::Schema& schema) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& f : schema) {
    nlohmann::ordered_json j;
    j["name"] = f.name;
    j["type"] = f.type.ToSql();
    arr.push_back(j);
  }
  return arr.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<engine::Schema> SchemaFromJson(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_array()) return Status::Corruption("schema JSON is not an array");
  engine::Schema out;
  for (const auto& f : j) {
    if (!f.is_object() || !f.contains("name") || !f["name"].is_string() || !f.contains("type") ||
        !f["type"].is_string()) {
      return Status::Corruption("schema JSON entry is not {\"name\",\"type\"}");
    }
    SLUICE_ASSIGN_OR_RETURN(engine::DataType t,
                            engine::DataType::FromSql(f["type"].get<std::string>()));
    out.push_back(engine::Field{f["name"].get<std::string>(), t, true});
  }
  return out;
}

}  // namespace sluice::sources
