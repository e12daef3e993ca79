#include "sql/table_metadata_rows.h"

#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "common/redaction.h"
#include "delta/describe.h"
#include "fs/file_system.h"
#include "sql/table_catalog.h"

namespace sluice::sql {
namespace {

using Row = std::vector<std::optional<std::string>>;

Row Info(const std::string& name, const std::string& value) { return {name, value, std::string()}; }

}  // namespace

TableIdentity IdentityOf(const std::string& name, bool is_path, const std::string& path,
                         const std::string& warehouse) {
  TableIdentity id;
  id.is_path = is_path;
  id.name_space = is_path ? "delta" : "default";
  id.table = is_path ? name : NormalizeTableName(name);
  id.location = path;
  // A named table's location is a URI in Spark (file:/abs/path); a path table's as given.
  if (!is_path && fs::PathScheme(path).empty()) {
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(path, ec);
    id.location = "file:" + (ec ? path : abs.lexically_normal().string());
  }
  id.managed = is_path || path == fs::JoinPath(warehouse, id.table);
  return id;
}

std::string TableIdentity::QualifiedName() const {
  if (is_path) return "delta.`" + table + "`";
  return "spark_catalog." + name_space + "." + table;
}

std::vector<std::pair<std::string, std::string>> TableProperties(const delta::Snapshot& snapshot) {
  std::map<std::string, std::string> props;
  for (const auto& [k, v] : snapshot.metadata.configuration) {
    if (k != "path") props[k] = v;
  }
  const delta::Protocol& p = snapshot.protocol;
  props["delta.minReaderVersion"] = std::to_string(p.min_reader_version);
  props["delta.minWriterVersion"] = std::to_string(p.min_writer_version);
  for (const auto* features : {&p.reader_features, &p.writer_features}) {
    if (!*features) continue;
    for (const std::string& f : **features) props["delta.feature." + f] = "supported";
  }
  props = RedactOptions(props);
  return {props.begin(), props.end()};
}

std::string TablePropertyValue(const TableIdentity& id, const delta::Snapshot& snapshot,
                               const std::string& key) {
  for (const auto& [k, v] : TableProperties(snapshot)) {
    if (k == key) return v;
  }
  // Spark names a path table spark_catalog.delta.`/path` here (its SHOW CREATE TABLE would not).
  return "Table " + std::string(id.is_path ? "spark_catalog." : "") + id.QualifiedName() +
         " does not have property: " + key;
}

std::vector<Row> DetailedTableInformation(const TableIdentity& id,
                                          const delta::Snapshot& snapshot) {
  std::vector<Row> rows;
  rows.push_back(Info("", ""));
  rows.push_back(Info("# Detailed Table Information", ""));
  rows.push_back(Info("Catalog", "spark_catalog"));
  rows.push_back(Info("Namespace", id.name_space));
  rows.push_back(Info("Database", id.name_space));
  rows.push_back(Info("Table", id.table));
  rows.push_back(Info("Type", id.managed ? "MANAGED" : "EXTERNAL"));
  if (snapshot.metadata.description)
    rows.push_back(Info("Comment", *snapshot.metadata.description));
  rows.push_back(Info("Location", id.location));
  rows.push_back(Info("Provider", "delta"));
  if (id.managed && !id.is_path) rows.push_back(Info("Is_managed_location", "true"));
  std::string props;
  for (const auto& [k, v] : TableProperties(snapshot)) {
    props += (props.empty() ? "" : ",") + k + "=" + v;
  }
  rows.push_back(Info("Table Properties", "[" + props + "]"));
  return rows;
}

std::string CreateTableStatementText(const TableIdentity& id, const delta::Snapshot& snapshot) {
  std::string out = "CREATE TABLE " + id.QualifiedName() + " (\n";
  nlohmann::json schema = nlohmann::json::parse(snapshot.metadata.schema_string, nullptr, false);
  const nlohmann::json fields = schema.is_object() ? schema.value("fields", nlohmann::json::array())
                                                   : nlohmann::json::array();
  // The columns in the schema's order (Delta keeps it; Spark's own tables list the partition
  // columns last, a Delta table need not), so that the statement makes the same schema.
  for (size_t i = 0; i < fields.size(); ++i) {
    const nlohmann::json& f = fields[i];
    out += "  " + delta::SparkQuoteIfNeeded(f.value("name", "")) + " " +
           delta::SparkTypeDdl(f.contains("type") ? f["type"].dump() : "null");
    if (!f.value("nullable", true)) out += " NOT NULL";
    if (f.contains("metadata") && f["metadata"].is_object() && f["metadata"].contains("comment") &&
        f["metadata"]["comment"].is_string()) {
      out += " COMMENT " + delta::SparkQuoteString(f["metadata"]["comment"].get<std::string>());
    }
    out += i + 1 < fields.size() ? ",\n" : ")\n";
  }
  if (fields.empty()) out += ")\n";
  const auto& partitions = snapshot.metadata.partition_columns;
  out += "USING delta\n";
  if (!partitions.empty()) {
    out += "PARTITIONED BY (";
    for (size_t i = 0; i < partitions.size(); ++i) {
      out += (i ? ", " : "") + delta::SparkQuoteIfNeeded(partitions[i]);
    }
    out += ")\n";
  }
  if (snapshot.metadata.description) {
    out += "COMMENT " + delta::SparkQuoteString(*snapshot.metadata.description) + "\n";
  }
  if (!id.managed || id.is_path) out += "LOCATION " + delta::SparkQuoteString(id.location) + "\n";
  const auto props = TableProperties(snapshot);
  if (!props.empty()) {
    out += "TBLPROPERTIES (\n";
    for (size_t i = 0; i < props.size(); ++i) {
      out += "  " + delta::SparkQuoteString(props[i].first) + " = " +
             delta::SparkQuoteString(props[i].second) + (i + 1 < props.size() ? ",\n" : ")\n");
    }
  }
  return out;
}

}  // namespace sluice::sql
