#include "delta/describe.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "delta/field_comment.h"
#include "delta/values.h"

namespace sluice::delta {

namespace {

using nlohmann::json;

std::string Str(const std::optional<std::string>& s) {
  return s ? QuoteLiteral(*s) : "CAST(NULL AS VARCHAR)";
}

std::string TsMillis(std::optional<int64_t> ms) {
  if (!ms) return "CAST(NULL AS TIMESTAMPTZ)";
  return "CAST(" + QuoteLiteral(FormatTimestampMicros(*ms * 1000)) + " AS TIMESTAMPTZ)";
}

std::string VarcharList(const std::vector<std::string>& items) {
  std::string s = "CAST([";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + QuoteLiteral(items[i]);
  return s + "] AS VARCHAR[])";
}

std::string MapSql(const std::vector<std::pair<std::string, std::optional<std::string>>>& kv) {
  std::vector<std::string> keys;
  std::string vals = "CAST([";
  for (size_t i = 0; i < kv.size(); ++i) {
    keys.push_back(kv[i].first);
    vals += (i ? ", " : "") + Str(kv[i].second);
  }
  return "MAP(" + VarcharList(keys) + ", " + vals + "] AS VARCHAR[]))";
}

std::string NullMap() { return "CAST(NULL AS MAP(VARCHAR, VARCHAR))"; }

// A JSON object's members as (key, text) pairs: strings as is, others as JSON.
std::vector<std::pair<std::string, std::optional<std::string>>> ObjectPairs(const json& obj) {
  std::vector<std::pair<std::string, std::optional<std::string>>> out;
  if (!obj.is_object()) return out;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (it->is_null()) {
      out.emplace_back(it.key(), std::nullopt);
    } else if (it->is_string()) {
      out.emplace_back(it.key(), it->get<std::string>());
    } else {
      out.emplace_back(it.key(), it->dump());
    }
  }
  return out;
}

std::optional<std::string> TextField(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::string TypeOf(const json& t) {
  if (t.is_string()) {
    std::string s = t.get<std::string>();
    if (s == "long") return "bigint";
    if (s == "integer") return "int";
    if (s == "short") return "smallint";
    if (s == "byte") return "tinyint";
    return s;
  }
  if (!t.is_object()) return t.dump();
  std::string kind = t.value("type", "");
  if (kind == "struct") {
    std::string s = "struct<";
    bool first = true;
    for (const json& f : t.value("fields", json::array())) {
      s += (first ? "" : ",") + f.value("name", "") + ":" +
           TypeOf(f.contains("type") ? f["type"] : json());
      first = false;
    }
    return s + ">";
  }
  if (kind == "array")
    return "array<" + TypeOf(t.contains("elementType") ? t["elementType"] : json()) + ">";
  if (kind == "map") {
    return "map<" + TypeOf(t.contains("keyType") ? t["keyType"] : json()) + "," +
           TypeOf(t.contains("valueType") ? t["valueType"] : json()) + ">";
  }
  return kind;
}

// Spark's DataType.sql of a schemaString type (BIGINT, MAP<STRING, INT>, STRUCT<a: INT>).
std::string DdlOf(const json& t) {
  if (t.is_string()) {
    const std::string s = t.get<std::string>();
    if (s == "long") return "BIGINT";
    if (s == "integer") return "INT";
    if (s == "short") return "SMALLINT";
    if (s == "byte") return "TINYINT";
    return AsciiUpper(s);  // string, boolean, double, decimal(10,2), timestamp_ntz, ...
  }
  if (!t.is_object()) return t.dump();
  const std::string kind = t.value("type", "");
  if (kind == "struct") {
    std::string s = "STRUCT<";
    bool first = true;
    for (const json& f : t.value("fields", json::array())) {
      s += (first ? "" : ", ") + SparkQuoteIfNeeded(f.value("name", "")) + ": " +
           DdlOf(f.contains("type") ? f["type"] : json());
      if (f.contains("metadata") && f["metadata"].is_object() &&
          f["metadata"].contains("comment") && f["metadata"]["comment"].is_string()) {
        s += " COMMENT " + SparkQuoteString(f["metadata"]["comment"].get<std::string>());
      }
      first = false;
    }
    return s + ">";
  }
  if (kind == "array")
    return "ARRAY<" + DdlOf(t.contains("elementType") ? t["elementType"] : json()) + ">";
  if (kind == "map") {
    return "MAP<" + DdlOf(t.contains("keyType") ? t["keyType"] : json()) + ", " +
           DdlOf(t.contains("valueType") ? t["valueType"] : json()) + ">";
  }
  return AsciiUpper(kind);
}

}  // namespace

std::string SparkQuoteIfNeeded(const std::string& name) {
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_';
  }) && !std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isdigit(c); });
  if (plain) return name;
  std::string out = "`";
  for (char c : name) out += c == '`' ? std::string("``") : std::string(1, c);
  return out + "`";
}

std::string SparkQuoteString(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string SparkTypeDdl(const std::string& type_json) {
  json t = json::parse(type_json, nullptr, false);
  if (t.is_discarded()) return type_json;
  return DdlOf(t);
}

std::string SparkTypeName(const std::string& type_json) {
  json t = json::parse(type_json, nullptr, false);
  if (t.is_discarded()) return type_json;
  return TypeOf(t);
}

std::map<std::string, std::string> SparkColumnTypes(const std::string& schema_string) {
  std::map<std::string, std::string> types;
  json schema = json::parse(schema_string, nullptr, false);
  if (schema.is_discarded() || !schema.is_object()) return types;
  for (const json& f : schema.value("fields", json::array())) {
    types[f.value("name", "")] = TypeOf(f.contains("type") ? f["type"] : json());
  }
  return types;
}

Result<engine::Batch> DescribeHistory(DeltaTable* table, engine::Connection* conn,
                                      std::optional<size_t> limit) {
  const std::string ctx = "DESCRIBE HISTORY of Delta table " + table->path();
  SLUICE_ASSIGN_OR_RETURN_CTX(std::vector<HistoryEntry> history, table->History(limit), ctx);
  const std::string cols =
      "version, timestamp, userId, userName, operation, operationParameters, job, notebook, "
      "clusterId, readVersion, "
      "isolationLevel, isBlindAppend, operationMetrics, userMetadata, engineInfo";
  std::string values;
  // A typed first row keeps the column types whatever the data; it is filtered out.
  values =
      "(CAST(-1 AS BIGINT), CAST(NULL AS TIMESTAMPTZ), CAST(NULL AS VARCHAR), CAST(NULL AS "
      "VARCHAR), "
      "CAST(NULL AS VARCHAR), " +
      NullMap() +
      ", CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR), "
      "CAST(NULL AS VARCHAR), CAST(NULL AS BIGINT), CAST(NULL AS VARCHAR), CAST(NULL AS "
      "BOOLEAN), " +
      NullMap() + ", CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR))";
  for (const HistoryEntry& e : history) {
    json ci = json::object();
    if (e.commit_info) {
      ci = json::parse(e.commit_info->raw_json, nullptr, false);
      if (ci.is_discarded() || !ci.is_object()) ci = json::object();
    }
    const bool has = e.commit_info.has_value();
    std::string row = "(" + std::to_string(e.version.value()) + ", " + TsMillis(e.timestamp_ms);
    for (const char* k : {"userId", "userName", "operation"}) row += ", " + Str(TextField(ci, k));
    row += ", " + (has && ci.contains("operationParameters")
                       ? MapSql(ObjectPairs(ci["operationParameters"]))
                       : NullMap());
    for (const char* k : {"job", "notebook", "clusterId"}) row += ", " + Str(TextField(ci, k));
    auto rv = ci.find("readVersion");
    row += ", " + (rv != ci.end() && rv->is_number_integer() ? std::to_string(rv->get<int64_t>())
                                                             : std::string("NULL"));
    row += ", " + Str(TextField(ci, "isolationLevel"));
    auto ba = ci.find("isBlindAppend");
    row +=
        ", " + (ba != ci.end() && ba->is_boolean() ? std::string(ba->get<bool>() ? "TRUE" : "FALSE")
                                                   : std::string("NULL"));
    row +=
        ", " + (has && ci.contains("operationMetrics") ? MapSql(ObjectPairs(ci["operationMetrics"]))
                                                       : NullMap());
    row +=
        ", " + Str(TextField(ci, "userMetadata")) + ", " + Str(TextField(ci, "engineInfo")) + ")";
    values += ", " + row;
  }
  auto b = conn->Query("SELECT * FROM (VALUES " + values + ") AS h(" + cols +
                       ") WHERE version >= 0 ORDER BY version DESC");
  if (!b.ok()) return b.status().WithContext(ctx);
  return b;
}

Result<engine::Batch> DescribeDetail(DeltaTable* table, engine::Connection* conn) {
  const std::string ctx = "DESCRIBE DETAIL of Delta table " + table->path();
  SLUICE_ASSIGN_OR_RETURN_CTX(auto snap, table->Latest(), ctx);
  int64_t size = 0;
  for (const AddFile& f : snap->files) size += f.size;
  std::vector<std::pair<std::string, std::optional<std::string>>> props;
  for (const auto& [k, v] : snap->metadata.configuration) props.emplace_back(k, v);
  std::vector<std::string> features;
  if (snap->protocol.reader_features) {
    for (const auto& f : *snap->protocol.reader_features) features.push_back(f);
  }
  if (snap->protocol.writer_features) {
    for (const auto& f : *snap->protocol.writer_features) {
      bool dup = false;
      for (const auto& g : features) dup |= g == f;
      if (!dup) features.push_back(f);
    }
  }
  std::string sql =
      "SELECT 'delta' AS format, " + QuoteLiteral(snap->metadata.id) + " AS id, " +
      Str(snap->metadata.name) + " AS name, " + Str(snap->metadata.description) +
      " AS description, " + QuoteLiteral(table->path()) + " AS location, " +
      TsMillis(snap->metadata.created_time) + " AS createdAt, " + TsMillis(snap->timestamp_ms) +
      " AS lastModified, " + VarcharList(snap->metadata.partition_columns) +
      " AS partitionColumns, " + VarcharList({}) + " AS clusteringColumns, CAST(" +
      std::to_string(snap->files.size()) + " AS BIGINT) AS numFiles, " + "CAST(" +
      std::to_string(size) + " AS BIGINT) AS sizeInBytes, " + MapSql(props) +
      " AS properties, CAST(" + std::to_string(snap->protocol.min_reader_version) +
      " AS INTEGER) AS minReaderVersion, CAST(" +
      std::to_string(snap->protocol.min_writer_version) + " AS INTEGER) AS minWriterVersion, " +
      VarcharList(features) + " AS tableFeatures";
  auto b = conn->Query(sql);
  if (!b.ok()) return b.status().WithContext(ctx);
  return b;
}

Result<engine::Batch> DescribeColumns(DeltaTable* table, engine::Connection* conn) {
  const std::string ctx = "DESCRIBE of Delta table " + table->path();
  SLUICE_ASSIGN_OR_RETURN_CTX(auto snap, table->Latest(), ctx);
  json schema = json::parse(snap->metadata.schema_string, nullptr, false);
  if (schema.is_discarded() || !schema.is_object()) {
    return Status::Corruption("schemaString is not a JSON object").WithContext(ctx);
  }
  std::vector<std::pair<std::string, std::pair<std::string, std::optional<std::string>>>> rows;
  std::map<std::string, std::string> types;
  for (const json& f : schema.value("fields", json::array())) {
    std::string name = f.value("name", "");
    std::string type = TypeOf(f.contains("type") ? f["type"] : json());
    std::optional<std::string> comment = FieldComment(f.value("metadata", json()));
    types[name] = type;
    rows.push_back({name, {type, comment}});
  }
  if (!snap->metadata.partition_columns.empty()) {
    rows.push_back({"", {"", std::nullopt}});
    rows.push_back({"# Partition Information", {"", std::nullopt}});
    rows.push_back({"# col_name", {"data_type", std::string("comment")}});
    for (const std::string& p : snap->metadata.partition_columns) {
      std::optional<std::string> comment;
      for (const auto& r : rows) {
        if (r.first == p) comment = r.second.second;
      }
      rows.push_back({p, {types.count(p) ? types[p] : "", comment}});
    }
  }
  std::string values = "(-1, CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR))";
  for (size_t i = 0; i < rows.size(); ++i) {
    values += ", (" + std::to_string(i) + ", " + QuoteLiteral(rows[i].first) + ", " +
              QuoteLiteral(rows[i].second.first) + ", " + Str(rows[i].second.second) + ")";
  }
  auto b = conn->Query("SELECT col_name, data_type, comment FROM (VALUES " + values +
                       ") AS d(i, col_name, data_type, comment) WHERE i >= 0 ORDER BY i");
  if (!b.ok()) return b.status().WithContext(ctx);
  return b;
}

}  // namespace sluice::delta
