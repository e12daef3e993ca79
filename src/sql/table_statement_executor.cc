#include "sql/table_statement_executor.h"

#include <cctype>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "delta/describe.h"
#include "delta/dml_delete.h"
#include "delta/dml_merge.h"
#include "delta/dml_update.h"
#include "delta/field_comment.h"
#include "delta/log_segment.h"
#include "delta/optimize.h"
#include "delta/restore.h"
#include "delta/schema.h"
#include "delta/table.h"
#include "delta/table_writer.h"
#include "delta/vacuum.h"
#include "dialect/tokenizer.h"
#include "dialect/types.h"
#include "engine/temporary_views.h"
#include "sql/literal_rows.h"

namespace sluice::sql {
namespace {

// A column definition's type: the engine's spelling (INT, MAP(VARCHAR, INT), STRUCT(a INT)) or
// Spark's (STRING, MAP<STRING, INT>, STRUCT<a: INT, b: STRING>, ARRAY<BIGINT>).
Result<engine::DataType> ColumnType(const std::string& type_sql) {
  Result<engine::DataType> type = engine::DataType::FromSql(type_sql);
  if (type.ok()) return type;
  Result<std::vector<dialect::Token>> tokens = dialect::Tokenize(type_sql);
  if (!tokens.ok()) return type;
  size_t i = 0;
  Result<std::string> converted = dialect::ConvertType(*tokens, &i);
  if (!converted.ok() || i + 1 != tokens->size()) return type;  // the last token is kEnd
  return engine::DataType::FromSql(*converted);
}

// The type of a column definition, or an error naming the column: an unknown type, or NOT NULL /
// COMMENT on a field inside STRUCT<...> (Spark keeps them; Sluice's nested fields are nullable
// and have no comment, so the definition is refused rather than changed).
Result<engine::DataType> DefinedColumnType(const ColumnDefinition& c) {
  Result<std::vector<dialect::Token>> tokens = dialect::Tokenize(c.type_sql);
  if (tokens.ok()) {
    for (size_t i = 0; i + 1 < tokens->size(); ++i) {
      const dialect::Token& t = (*tokens)[i];
      const bool not_null = t.IsKeyword("not") && (*tokens)[i + 1].IsKeyword("null");
      const bool comment =  // not a field named comment (STRUCT<comment: STRING>)
          t.IsKeyword("comment") && (*tokens)[i + 1].kind == dialect::TokenKind::kString;
      if (not_null || comment) {
        return Status::NotSupported(
            "column '" + c.name + "': " + (not_null ? "NOT NULL" : "COMMENT") +
            " on a field inside its type (" + c.type_sql +
            ") is not kept by Sluice yet (nested fields are nullable and have no comment); "
            "remove it");
      }
    }
  }
  Result<engine::DataType> type = ColumnType(c.type_sql);
  if (!type.ok()) {
    return Status::InvalidArgument("column '" + c.name + "' has an unknown type '" + c.type_sql +
                                   "'");
  }
  return type;
}

constexpr const char* kInsertSource = "__sluice_insert_source";

// SQL's TIMESTAMP is Spark's and Delta's `timestamp`: an instant, which the engine holds as
// TIMESTAMPTZ (values without a zone are read in the session zone, UTC). DuckDB's zone-less
// TIMESTAMP would be Delta's timestamp_ntz, a table feature Sluice does not write.
// Returns true when something changed.
bool PromoteTimestamps(engine::DataType* type) {
  bool changed = false;
  if (type->id == engine::TypeId::kTimestamp) {
    type->id = engine::TypeId::kTimestampTz;
    changed = true;
  }
  for (engine::Field& child : type->children) changed |= PromoteTimestamps(&child.type);
  return changed;
}

// `data` with zone-less timestamps cast to TIMESTAMPTZ (see PromoteTimestamps).
Result<engine::Batch> WithDeltaTypes(engine::Connection* conn, const engine::Batch& data) {
  bool any = false;
  std::string select;
  for (size_t i = 0; i < data.num_columns(); ++i) {
    engine::DataType type = data.schema()[i].type;
    bool changed = PromoteTimestamps(&type);
    any |= changed;
    if (i) select += ", ";
    std::string column = QuoteIdentifier(data.schema()[i].name);
    select += changed ? "CAST(" + column + " AS " + type.ToSql() + ") AS " + column : column;
  }
  if (!any) return data;
  SLUICE_RETURN_NOT_OK(conn->RegisterBatch(kInsertSource, data));
  Result<engine::Batch> out =
      conn->Query("SELECT " + select + " FROM " + QuoteIdentifier(kInsertSource));
  SLUICE_RETURN_NOT_OK(conn->UnregisterBatch(kInsertSource));
  return out;
}

// The rows of `data` as the table's columns: by position, by name, or into a column list;
// columns the statement does not give are NULL. Each value is CAST to the table's type.
Result<engine::Batch> AlignToTable(engine::Connection* conn, const engine::Batch& data,
                                   const engine::Schema& table, const InsertStatement& s,
                                   const std::string& display) {
  std::map<std::string, size_t> source_index;  // lower-cased target column -> data column
  if (s.by_name) {
    std::map<std::string, size_t> table_cols;
    for (size_t i = 0; i < table.size(); ++i) table_cols[AsciiLower(table[i].name)] = i;
    for (size_t c = 0; c < data.num_columns(); ++c) {
      std::string name = AsciiLower(data.schema()[c].name);
      if (table_cols.count(name) == 0) {
        return Status::InvalidArgument("INSERT INTO " + display + " BY NAME: the query's column '" +
                                       data.schema()[c].name + "' is not a column of the table");
      }
      if (!source_index.emplace(name, c).second) {
        return Status::InvalidArgument("INSERT INTO " + display + " BY NAME: column '" +
                                       data.schema()[c].name + "' is given twice");
      }
    }
  } else if (!s.columns.empty()) {
    if (s.columns.size() != data.num_columns()) {
      return Status::InvalidArgument(
          "INSERT INTO " + display + " names " + std::to_string(s.columns.size()) +
          " columns but the query gives " + std::to_string(data.num_columns()));
    }
    std::set<std::string> known;
    for (const auto& f : table) known.insert(AsciiLower(f.name));
    for (size_t c = 0; c < s.columns.size(); ++c) {
      std::string name = AsciiLower(s.columns[c]);
      if (known.count(name) == 0) {
        return Status::InvalidArgument("INSERT INTO " + display + ": '" + s.columns[c] +
                                       "' is not a column of the table");
      }
      if (!source_index.emplace(name, c).second) {
        return Status::InvalidArgument("INSERT INTO " + display + ": column '" + s.columns[c] +
                                       "' is named twice");
      }
    }
  } else {
    if (data.num_columns() != table.size()) {
      return Status::InvalidArgument(
          "INSERT INTO " + display + ": the table has " + std::to_string(table.size()) +
          " columns but the query gives " + std::to_string(data.num_columns()) +
          " (name the columns, or use INSERT INTO ... BY NAME)");
    }
    for (size_t i = 0; i < table.size(); ++i) source_index[AsciiLower(table[i].name)] = i;
  }
  std::string select;
  for (size_t i = 0; i < table.size(); ++i) {
    if (i) select += ", ";
    auto it = source_index.find(AsciiLower(table[i].name));
    std::string value =
        it == source_index.end() ? "NULL" : QuoteIdentifier(data.schema()[it->second].name);
    select +=
        "CAST(" + value + " AS " + table[i].type.ToSql() + ") AS " + QuoteIdentifier(table[i].name);
  }
  SLUICE_RETURN_NOT_OK(conn->RegisterBatch(kInsertSource, data));
  Result<engine::Batch> aligned =
      conn->Query("SELECT " + select + " FROM " + QuoteIdentifier(kInsertSource));
  Status unregister = conn->UnregisterBatch(kInsertSource);
  if (!aligned.ok()) return aligned.status().WithContext("INSERT INTO " + display);
  SLUICE_RETURN_NOT_OK(unregister);
  return aligned;
}

// A query that selects the same column twice (SELECT 1, 1) gives duplicate names, which a
// table cannot hold.
Status CheckDistinctColumnNames(const engine::Batch& data, const std::string& display) {
  std::set<std::string> seen;
  for (const auto& f : data.schema()) {
    if (!seen.insert(AsciiLower(f.name)).second) {
      return Status::InvalidArgument("CREATE TABLE " + display + " AS: the query returns column '" +
                                     f.name + "' twice; give the columns distinct names");
    }
  }
  return Status::OK();
}

}  // namespace

Result<engine::Schema> ColumnDefinitionsSchema(const std::vector<ColumnDefinition>& columns) {
  engine::Schema schema;
  for (const ColumnDefinition& c : columns) {
    SLUICE_ASSIGN_OR_RETURN(engine::DataType delta_type, DefinedColumnType(c));
    PromoteTimestamps(&delta_type);
    schema.push_back(engine::Field{c.name, delta_type, !c.not_null});
  }
  return schema;
}

std::string DisplayName(const TableName& table) {
  return table.is_path ? "delta.`" + table.name + "`" : table.name;
}

TableStatementExecutor::TableStatementExecutor(std::shared_ptr<fs::FileSystem> fs,
                                               engine::Engine* engine, engine::Connection* conn,
                                               TableCatalog* catalog, const Settings* settings)
    : fs_(std::move(fs)), engine_(engine), conn_(conn), catalog_(catalog), settings_(settings) {}

Result<engine::Batch> TableStatementExecutor::Execute(const TableStatement& statement) {
  return std::visit([this](const auto& s) { return Run(s); }, statement);
}

Result<std::string> TableStatementExecutor::ExistingTablePath(const TableName& table) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, catalog_->Resolve(table));
  SLUICE_ASSIGN_OR_RETURN(bool exists, fs_->Exists(fs::JoinPath(path, "_delta_log")));
  if (!exists) {
    if (table.is_path) return Status::NotFound(DisplayName(table) + " is not a Delta table");
    return Status::NotFound("table " + table.name + " does not exist in warehouse " +
                            catalog_->warehouse());
  }
  return path;
}

Result<engine::Batch> TableStatementExecutor::AffectedRows(int64_t n) {
  return LiteralRows(conn_, {{"num_affected_rows", "BIGINT"}}, {{std::to_string(n)}});
}

Result<engine::Batch> TableStatementExecutor::Run(const CreateTableStatement& s) {
  const std::string display = DisplayName(s.table);
  std::string path;
  if (s.location && !s.table.is_path) {
    path = *s.location;
  } else {
    SLUICE_ASSIGN_OR_RETURN(path, catalog_->Resolve(s.table));
  }
  // A _delta_log without a commit or checkpoint (a CREATE killed before its commit) is no
  // table, as Delta reads it: a new CREATE makes it.
  Result<delta::LogListing> log = delta::ListLog(fs_.get(), path);
  if (!log.ok() && !log.status().IsNotFound()) return log.status();
  const bool exists = log.ok();
  const std::string verb = s.replace_only ? "REPLACE TABLE "
                           : s.or_replace ? "CREATE OR REPLACE TABLE "
                                          : "CREATE TABLE ";
  if (exists) {
    if (s.if_not_exists) return engine::Batch();
    if (!s.or_replace) return Status::AlreadyExists("table " + display + " already exists");
  } else if (s.replace_only) {
    return Status::NotFound("Table " + display +
                            " cannot be replaced as it does not exist. Use CREATE OR REPLACE "
                            "TABLE to create the table.");
  }

  // The new table's schema (and rows, for AS SELECT).
  engine::Schema schema;
  delta::FieldMetadata column_metadata;  // the columns' COMMENTs
  std::optional<engine::Batch> rows;
  if (s.as_query) {
    SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch queried, conn_->Query(*s.as_query),
                                verb + display + " AS");
    SLUICE_RETURN_NOT_OK(CheckDistinctColumnNames(queried, display));
    SLUICE_ASSIGN_OR_RETURN(rows, WithDeltaTypes(conn_, queried));
    schema = rows->schema();
  } else {
    std::set<std::string> names;
    for (const ColumnDefinition& c : s.columns) {
      if (!names.insert(AsciiLower(c.name)).second) {
        return Status::InvalidArgument(verb + display + ": column '" + c.name +
                                       "' is defined twice");
      }
      SLUICE_ASSIGN_OR_RETURN(engine::DataType delta_type,
                              DefinedColumnType(c).WithContext(verb + display));
      PromoteTimestamps(&delta_type);
      schema.push_back(engine::Field{c.name, delta_type, !c.not_null});
      if (c.comment) {  // Spark keeps a column's COMMENT in its field metadata
        column_metadata[c.name] = nlohmann::json{{"comment", *c.comment}}.dump();
      }
    }
    for (const std::string& p : s.partitioned_by) {
      if (names.count(AsciiLower(p)) == 0) {
        return Status::InvalidArgument(verb + display + ": partition column '" + p +
                                       "' is not a column of the table");
      }
    }
  }

  SLUICE_ASSIGN_OR_RETURN(auto writer, delta::DeltaTableWriter::Open(fs_, engine_, path));
  if (exists) {
    // Delta's REPLACE TABLE: one commit with the new metadata that removes every file (and adds
    // the query's rows); earlier versions stay readable by time travel.
    delta::ReplaceTableOptions options;
    options.partition_columns = s.partitioned_by;
    options.configuration = s.properties;
    options.operation = std::string(s.replace_only ? "REPLACE TABLE" : "CREATE OR REPLACE TABLE") +
                        (s.as_query ? " AS SELECT" : "");
    options.field_metadata = column_metadata;
    options.description = s.comment;
    SLUICE_RETURN_NOT_OK(writer->ReplaceTable(schema, rows ? &*rows : nullptr, options)
                             .status()
                             .WithContext(verb + display));
  } else if (rows) {
    if (s.comment) {
      return Status::NotSupported(
          verb + display +
          " AS SELECT ... COMMENT: the table's comment is not kept by a CREATE "
          "TABLE AS SELECT yet; create the table with its columns and COMMENT, then INSERT INTO " +
          display + " SELECT ...");
    }
    delta::WriteOptions options;
    options.mode = delta::SaveMode::kErrorIfExists;
    options.partition_by = s.partitioned_by;
    options.configuration = s.properties;
    options.operation = "CREATE TABLE AS SELECT";
    SLUICE_RETURN_NOT_OK(writer->Write(*rows, options).status().WithContext(verb + display));
  } else {
    delta::CreateTableOptions options;
    options.partition_columns = s.partitioned_by;
    options.configuration = s.properties;
    options.field_metadata = std::move(column_metadata);
    options.description = s.comment;
    SLUICE_RETURN_NOT_OK(writer->CreateTable(schema, options).status().WithContext(verb + display));
  }
  if (s.location && !s.table.is_path) {
    SLUICE_RETURN_NOT_OK(catalog_->RegisterLocation(s.table.name, *s.location));
  }
  return engine::Batch();
}

Result<engine::Batch> TableStatementExecutor::Run(const InsertStatement& s) {
  const std::string display = DisplayName(s.table);
  SLUICE_ASSIGN_OR_RETURN(std::string path, ExistingTablePath(s.table));
  SLUICE_ASSIGN_OR_RETURN(auto writer, delta::DeltaTableWriter::Open(fs_, engine_, path));
  SLUICE_ASSIGN_OR_RETURN(auto snapshot, writer->Latest());
  if (snapshot == nullptr) return Status::NotFound("table " + display + " does not exist");
  SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch rows, conn_->Query(s.query), "INSERT INTO " + display);
  SLUICE_ASSIGN_OR_RETURN(engine::Batch aligned,
                          AlignToTable(conn_, rows, snapshot->schema.fields, s, display));
  delta::WriteOptions options;
  options.mode = s.overwrite ? delta::SaveMode::kOverwrite : delta::SaveMode::kAppend;
  if (txn_) {
    options.txn_app_id = txn_->app_id;
    options.txn_version = txn_->version;
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(delta::WriteResult written, writer->Write(aligned, options),
                              (s.overwrite ? "INSERT OVERWRITE " : "INSERT INTO ") + display);
  return AffectedRows(written.num_rows);
}

Result<engine::Batch> TableStatementExecutor::Run(const DropTableStatement& s) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, catalog_->Resolve(s.table));
  SLUICE_ASSIGN_OR_RETURN(bool exists, fs_->Exists(fs::JoinPath(path, "_delta_log")));
  if (!exists) {
    if (s.if_exists) return engine::Batch();
    return Status::NotFound("table " + DisplayName(s.table) + " does not exist in warehouse " +
                            catalog_->warehouse());
  }
  if (s.table.is_path) {
    return Status::NotSupported("DROP TABLE " + DisplayName(s.table) +
                                ": a path table is not in the catalog; delete its directory");
  }
  // A table created with LOCATION is external, as in Spark: DROP forgets it, the data stays.
  std::string managed_path = fs::JoinPath(catalog_->warehouse(), NormalizeTableName(s.table.name));
  if (path != managed_path) {
    SLUICE_RETURN_NOT_OK(catalog_->UnregisterLocation(s.table.name));
    return engine::Batch();
  }
  SLUICE_RETURN_NOT_OK(fs_->DeleteRecursive(path));
  return engine::Batch();
}

Result<engine::Batch> TableStatementExecutor::Run(const DescribeStatement& s) {
  if (s.kind == DescribeStatement::Kind::kTable && !s.table.is_path) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<engine::Batch> view, DescribeView(s));
    if (view) return std::move(*view);
  }
  SLUICE_ASSIGN_OR_RETURN(std::string path, ExistingTablePath(s.table));
  SLUICE_ASSIGN_OR_RETURN(auto table, delta::DeltaTable::Open(fs_, engine_, path));
  switch (s.kind) {
    case DescribeStatement::Kind::kTable: {
      SLUICE_ASSIGN_OR_RETURN(auto snapshot, table->Latest());
      std::vector<std::vector<std::optional<std::string>>> rows;
      // A column's COMMENT is its field metadata's "comment" (as Spark stores it).
      auto comment_of = [&](const std::string& column) {
        return delta::FieldComment(snapshot->schema.metadata, column);
      };
      // Spark's type names (bigint, string, map<string,int>), as Spark's DESCRIBE prints them.
      const std::map<std::string, std::string> spark_types =
          delta::SparkColumnTypes(snapshot->metadata.schema_string);
      auto type_of = [&](const engine::Field& f) {
        auto it = spark_types.find(f.name);
        return it != spark_types.end() ? it->second : f.type.ToSql();
      };
      for (const engine::Field& f : snapshot->schema.fields) {
        rows.push_back({f.name, type_of(f), comment_of(f.name)});
      }
      if (!snapshot->metadata.partition_columns.empty()) {
        rows.push_back({"# Partition Information", std::string(), std::string()});
        rows.push_back({"# col_name", "data_type", std::string("comment")});
        for (const std::string& p : snapshot->metadata.partition_columns) {
          std::string type;
          for (const auto& f : snapshot->schema.fields) {
            if (f.name == p) type = type_of(f);
          }
          rows.push_back({p, type, comment_of(p)});
        }
      }
      if (s.extended) {
        for (auto& row : DetailedRows(s.table, path, *snapshot)) rows.push_back(std::move(row));
      }
      return LiteralRows(conn_, {{"col_name"}, {"data_type"}, {"comment"}}, rows);
    }
    case DescribeStatement::Kind::kHistory: {
      std::optional<size_t> limit;
      if (s.limit) limit = static_cast<size_t>(*s.limit);
      SLUICE_ASSIGN_OR_RETURN(auto history, table->History(limit));
      std::vector<std::vector<std::optional<std::string>>> rows;
      for (const delta::HistoryEntry& h : history) {
        std::optional<std::string> operation, info;
        if (h.commit_info) {
          operation = h.commit_info->operation;
          info = h.commit_info->raw_json;
        }
        rows.push_back(
            {std::to_string(h.version.value()), std::to_string(h.timestamp_ms), operation, info});
      }
      SLUICE_RETURN_NOT_OK(conn_->Execute("SET TimeZone = 'UTC'"));
      SLUICE_ASSIGN_OR_RETURN(engine::Batch raw, LiteralRows(conn_,
                                                             {{"version", "BIGINT"},
                                                              {"timestamp_ms", "BIGINT"},
                                                              {"operation"},
                                                              {"commit_info", "JSON"}},
                                                             rows));
      SLUICE_RETURN_NOT_OK(conn_->RegisterBatch("__sluice_history", raw));
      Result<engine::Batch> out = conn_->Query(
          "SELECT version, make_timestamp(timestamp_ms * 1000) AS timestamp, operation, "
          "commit_info->'operationParameters' AS operationParameters, "
          "commit_info->'operationMetrics' AS operationMetrics, "
          "commit_info->>'engineInfo' AS engineInfo, "
          "CAST(commit_info->>'isBlindAppend' AS BOOLEAN) AS isBlindAppend "
          "FROM __sluice_history ORDER BY version DESC");
      SLUICE_RETURN_NOT_OK(conn_->UnregisterBatch("__sluice_history"));
      return out;
    }
    case DescribeStatement::Kind::kDetail: {
      SLUICE_ASSIGN_OR_RETURN(auto snapshot, table->Latest());
      int64_t size = 0;
      for (const auto& f : snapshot->files) size += f.size;
      std::string partitions = "[";
      for (size_t i = 0; i < snapshot->metadata.partition_columns.size(); ++i) {
        if (i) partitions += ", ";
        partitions += snapshot->metadata.partition_columns[i];
      }
      partitions += "]";
      std::string properties = "{";
      bool first = true;
      for (const auto& [k, v] : snapshot->metadata.configuration) {
        if (!first) properties += ", ";
        first = false;
        properties += k + "=" + v;
      }
      properties += "}";
      return LiteralRows(
          conn_,
          {{"format"},
           {"id"},
           {"name"},
           {"location"},
           {"version", "BIGINT"},
           {"partitionColumns"},
           {"numFiles", "BIGINT"},
           {"sizeInBytes", "BIGINT"},
           {"properties"},
           {"minReaderVersion", "INTEGER"},
           {"minWriterVersion", "INTEGER"}},
          {{std::string("delta"), snapshot->metadata.id,
            s.table.is_path ? std::nullopt : std::optional<std::string>(s.table.name), path,
            std::to_string(snapshot->version.value()), partitions,
            std::to_string(snapshot->files.size()), std::to_string(size), properties,
            std::to_string(snapshot->protocol.min_reader_version),
            std::to_string(snapshot->protocol.min_writer_version)}});
    }
  }
  return Status::Internal("unknown DESCRIBE kind");
}

Result<engine::Batch> TableStatementExecutor::Run(const AlterTableAddColumnsStatement& s) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, ExistingTablePath(s.table));
  std::vector<engine::Field> fields;
  for (const ColumnDefinition& c : s.columns) {
    SLUICE_ASSIGN_OR_RETURN(
        engine::DataType delta_type,
        DefinedColumnType(c).WithContext("ALTER TABLE " + DisplayName(s.table)));
    PromoteTimestamps(&delta_type);
    fields.push_back(engine::Field{c.name, delta_type, !c.not_null});
  }
  SLUICE_ASSIGN_OR_RETURN(auto writer, delta::DeltaTableWriter::Open(fs_, engine_, path));
  SLUICE_RETURN_NOT_OK(
      writer->AddColumns(fields).status().WithContext("ALTER TABLE " + DisplayName(s.table)));
  return engine::Batch();
}

Result<engine::Batch> TableStatementExecutor::Run(const AlterTableRenameColumnStatement& s) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, ExistingTablePath(s.table));
  SLUICE_ASSIGN_OR_RETURN(auto writer, delta::DeltaTableWriter::Open(fs_, engine_, path));
  SLUICE_RETURN_NOT_OK(writer->RenameColumn(s.column, s.new_name)
                           .status()
                           .WithContext("ALTER TABLE " + DisplayName(s.table)));
  return engine::Batch();
}

Result<engine::Batch> TableStatementExecutor::Run(const AlterTableDropColumnsStatement& s) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, ExistingTablePath(s.table));
  SLUICE_ASSIGN_OR_RETURN(auto writer, delta::DeltaTableWriter::Open(fs_, engine_, path));
  std::vector<std::vector<std::string>> columns = s.columns;
  if (s.if_exists) {
    // IF EXISTS: top-level columns the table does not have are skipped.
    SLUICE_ASSIGN_OR_RETURN(auto snap, writer->Latest());
    std::vector<std::vector<std::string>> present;
    for (auto& c : columns) {
      if (c.size() > 1 || (snap && delta::FindField(snap->schema.fields, c[0]))) {
        present.push_back(std::move(c));
      }
    }
    if (present.empty()) return engine::Batch();
    columns = std::move(present);
  }
  SLUICE_RETURN_NOT_OK(
      writer->DropColumns(columns).status().WithContext("ALTER TABLE " + DisplayName(s.table)));
  return engine::Batch();
}

Result<engine::Batch> TableStatementExecutor::Run(const AlterTableSetPropertiesStatement& s) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, ExistingTablePath(s.table));
  SLUICE_ASSIGN_OR_RETURN(auto writer, delta::DeltaTableWriter::Open(fs_, engine_, path));
  SLUICE_RETURN_NOT_OK(writer->SetProperties(s.properties)
                           .status()
                           .WithContext("ALTER TABLE " + DisplayName(s.table)));
  return engine::Batch();
}

namespace {

// The metrics row of a DML commit: num_affected_rows plus the operation's own counts, as
// Databricks SQL returns them.
Result<engine::Batch> MetricsRow(engine::Connection* conn, const delta::DmlResult& result,
                                 const std::vector<std::pair<std::string, std::string>>& columns) {
  std::vector<LiteralColumn> cols;
  std::vector<std::optional<std::string>> row;
  for (const auto& [name, metric] : columns) {
    cols.push_back({name, "BIGINT"});
    auto it = result.metrics.find(metric);
    row.push_back(std::to_string(it == result.metrics.end() ? 0 : it->second));
  }
  return LiteralRows(conn, cols, {row});
}

}  // namespace

Result<delta::DmlTable> TableStatementExecutor::OpenDml(
    const TableName& table, std::unique_ptr<delta::DeltaTableWriter>* writer) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, ExistingTablePath(table));
  SLUICE_ASSIGN_OR_RETURN(*writer, delta::DeltaTableWriter::Open(fs_, engine_, path));
  return delta::DmlTable{writer->get(), fs_, engine_, conn_};
}

Result<bool> TableStatementExecutor::TxnAlreadyCommitted(delta::DeltaTableWriter* writer) {
  if (!txn_) return false;
  SLUICE_ASSIGN_OR_RETURN(auto snapshot, writer->Latest());
  if (snapshot == nullptr) return false;
  std::optional<int64_t> recorded = snapshot->TxnVersion(txn_->app_id);
  return recorded.has_value() && *recorded >= txn_->version;
}

Result<engine::Batch> TableStatementExecutor::Run(const UpdateStatement& s) {
  std::unique_ptr<delta::DeltaTableWriter> writer;
  SLUICE_ASSIGN_OR_RETURN(delta::DmlTable table, OpenDml(s.table, &writer));
  delta::Assignments assignments;
  for (const Assignment& a : s.assignments) assignments.emplace_back(a.column, a.expression);
  delta::DmlOptions options;
  if (s.alias) options.target_alias = *s.alias;
  options.txn = txn_;
  SLUICE_ASSIGN_OR_RETURN(bool skip, TxnAlreadyCommitted(writer.get()));
  if (skip) return MetricsRow(conn_, {}, {{"num_affected_rows", "numUpdatedRows"}});
  SLUICE_ASSIGN_OR_RETURN_CTX(delta::DmlResult result,
                              delta::UpdateRows(table, assignments, s.where, options),
                              "UPDATE " + DisplayName(s.table));
  return MetricsRow(conn_, result, {{"num_affected_rows", "numUpdatedRows"}});
}

Result<engine::Batch> TableStatementExecutor::Run(const DeleteStatement& s) {
  std::unique_ptr<delta::DeltaTableWriter> writer;
  SLUICE_ASSIGN_OR_RETURN(delta::DmlTable table, OpenDml(s.table, &writer));
  delta::DmlOptions options;
  if (s.alias) options.target_alias = *s.alias;
  options.txn = txn_;
  SLUICE_ASSIGN_OR_RETURN(bool skip, TxnAlreadyCommitted(writer.get()));
  if (skip) return MetricsRow(conn_, {}, {{"num_affected_rows", "numDeletedRows"}});
  SLUICE_ASSIGN_OR_RETURN_CTX(delta::DmlResult result, delta::DeleteRows(table, s.where, options),
                              "DELETE FROM " + DisplayName(s.table));
  return MetricsRow(conn_, result, {{"num_affected_rows", "numDeletedRows"}});
}

Result<engine::Batch> TableStatementExecutor::Run(const MergeStatement& s) {
  std::unique_ptr<delta::DeltaTableWriter> writer;
  SLUICE_ASSIGN_OR_RETURN(delta::DmlTable table, OpenDml(s.target, &writer));
  delta::MergeSpec spec;
  spec.source_sql = s.source;
  // Without an alias a source is named as written (MERGE ... USING updates ON t.id = updates.id),
  // unless it is a subquery or a path.
  std::string default_source_alias = "source";
  if (!s.source.empty() && s.source[0] != '(' && s.source.find('`') == std::string::npos) {
    default_source_alias = s.source.substr(
        s.source.find_last_of('.') == std::string::npos ? 0 : s.source.find_last_of('.') + 1);
    if (default_source_alias.size() >= 2 && default_source_alias.front() == '"' &&
        default_source_alias.back() == '"') {
      default_source_alias = default_source_alias.substr(1, default_source_alias.size() - 2);
    }
  }
  spec.source_alias = s.source_alias.value_or(default_source_alias);
  spec.target_alias = s.target_alias.value_or(s.target.is_path ? "target" : s.target.name);
  spec.on = s.on;
  for (const MergeClause& c : s.clauses) {
    delta::MergeClause clause;
    clause.kind = c.match == MergeMatch::kMatched ? delta::MergeClauseKind::kMatched
                  : c.match == MergeMatch::kNotMatchedByTarget
                      ? delta::MergeClauseKind::kNotMatched
                      : delta::MergeClauseKind::kNotMatchedBySource;
    clause.condition = c.condition;
    switch (c.action) {
      case MergeAction::kUpdate:
        clause.action = delta::MergeActionKind::kUpdate;
        for (const Assignment& a : c.assignments)
          clause.assignments.emplace_back(a.column, a.expression);
        break;
      case MergeAction::kUpdateStar:
        clause.action = delta::MergeActionKind::kUpdateAll;
        break;
      case MergeAction::kDelete:
        clause.action = delta::MergeActionKind::kDelete;
        break;
      case MergeAction::kInsert:
        clause.action = delta::MergeActionKind::kInsert;
        if (c.insert_columns.empty()) {
          return Status::InvalidArgument("MERGE INTO " + DisplayName(s.target) +
                                         ": WHEN NOT MATCHED THEN INSERT needs a column list, "
                                         "e.g. INSERT (id, v) VALUES (s.id, s.v), or INSERT *");
        }
        for (size_t i = 0; i < c.insert_columns.size(); ++i) {
          clause.assignments.emplace_back(c.insert_columns[i], c.insert_values[i]);
        }
        break;
      case MergeAction::kInsertStar:
        clause.action = delta::MergeActionKind::kInsertAll;
        break;
    }
    spec.clauses.push_back(std::move(clause));
  }
  delta::DmlOptions options;
  options.txn = txn_;
  SLUICE_ASSIGN_OR_RETURN(bool skip, TxnAlreadyCommitted(writer.get()));
  delta::DmlResult result;
  if (!skip) {
    SLUICE_ASSIGN_OR_RETURN_CTX(result, delta::MergeInto(table, spec, options),
                                "MERGE INTO " + DisplayName(s.target));
  }
  // num_affected_rows counts every target row the MERGE changed, as Databricks SQL reports it.
  result.metrics["__affected"] = result.metrics["numTargetRowsUpdated"] +
                                 result.metrics["numTargetRowsDeleted"] +
                                 result.metrics["numTargetRowsInserted"];
  return MetricsRow(conn_, result,
                    {{"num_affected_rows", "__affected"},
                     {"num_updated_rows", "numTargetRowsUpdated"},
                     {"num_deleted_rows", "numTargetRowsDeleted"},
                     {"num_inserted_rows", "numTargetRowsInserted"}});
}

Result<engine::Batch> TableStatementExecutor::Run(const VacuumStatement& s) {
  std::unique_ptr<delta::DeltaTableWriter> writer;
  SLUICE_ASSIGN_OR_RETURN(delta::DmlTable table, OpenDml(s.table, &writer));
  delta::VacuumOptions options;
  options.retain_hours = s.retain_hours;
  options.dry_run = s.dry_run;
  options.retention_duration_check = settings_->GetBoolean("delta.retentionDurationCheck");
  SLUICE_ASSIGN_OR_RETURN_CTX(delta::VacuumResult result, delta::Vacuum(table, options),
                              "VACUUM " + DisplayName(s.table));
  std::vector<std::vector<std::optional<std::string>>> rows;
  for (const std::string& f : result.files) rows.push_back({f});
  if (!s.dry_run) {
    SLUICE_ASSIGN_OR_RETURN(std::string path, ExistingTablePath(s.table));
    rows = {{path}};
  }
  return LiteralRows(conn_, {{"path"}}, rows);
}

Result<engine::Batch> TableStatementExecutor::Run(const OptimizeStatement& s) {
  std::unique_ptr<delta::DeltaTableWriter> writer;
  SLUICE_ASSIGN_OR_RETURN(delta::DmlTable table, OpenDml(s.table, &writer));
  delta::OptimizeOptions options;
  options.partition_predicate = s.where;
  options.purge = s.purge;
  SLUICE_ASSIGN_OR_RETURN_CTX(delta::DmlResult result, delta::Optimize(table, options),
                              (s.purge ? "REORG TABLE " : "OPTIMIZE ") + DisplayName(s.table));
  return MetricsRow(
      conn_, result,
      {{"num_files_added", "numAddedFiles"}, {"num_files_removed", "numRemovedFiles"}});
}

Result<engine::Batch> TableStatementExecutor::Run(const RestoreStatement& s) {
  std::unique_ptr<delta::DeltaTableWriter> writer;
  SLUICE_ASSIGN_OR_RETURN(delta::DmlTable table, OpenDml(s.table, &writer));
  delta::RestoreTarget target;
  if (s.version) target.version = Version(*s.version);
  if (s.timestamp) {
    Result<engine::Batch> ms =
        conn_->Query("SELECT epoch_ms(CAST(" + QuoteLiteral(*s.timestamp) + " AS TIMESTAMPTZ))");
    if (!ms.ok()) return Status::InvalidArgument("'" + *s.timestamp + "' is not a timestamp");
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> value, ms->GetInt64(0, 0));
    target.timestamp_ms = value.value_or(0);
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(delta::DmlResult result, delta::RestoreTable(table, target),
                              "RESTORE " + DisplayName(s.table));
  return MetricsRow(
      conn_, result,
      {{"num_restored_files", "numRestoredFiles"}, {"num_removed_files", "numRemovedFiles"}});
}

}  // namespace sluice::sql

namespace sluice::sql {

namespace {

// Spark's SHOW TABLES pattern (StringUtils.filterPattern): alternatives split at '|', each
// trimmed, '*' standing for any text, the rest read as a regular expression, matched whole and
// without case.
Result<std::vector<std::regex>> ShowTablesPattern(const std::string& pattern) {
  std::vector<std::regex> out;
  size_t start = 0;
  while (start <= pattern.size()) {
    size_t bar = pattern.find('|', start);
    if (bar == std::string::npos) bar = pattern.size();
    std::string part = pattern.substr(start, bar - start);
    part.erase(0, part.find_first_not_of(" \t"));
    part.erase(part.find_last_not_of(" \t") + 1);
    std::string regex;
    for (char c : part) regex += c == '*' ? std::string(".*") : std::string(1, c);
    try {
      out.emplace_back(regex, std::regex::ECMAScript | std::regex::icase);
    } catch (const std::regex_error& e) {
      return Status::InvalidArgument("SHOW TABLES LIKE '" + pattern + "': not a valid pattern (" +
                                     e.what() + ")");
    }
    start = bar + 1;
  }
  return out;
}

bool MatchesAny(const std::vector<std::regex>& patterns, const std::string& name) {
  if (patterns.empty()) return true;
  for (const std::regex& p : patterns) {
    if (std::regex_match(name, p)) return true;
  }
  return false;
}

// View names Sluice gives its own registrations ("__agg_in", "delta:t", "read_state:s:0", ...):
// never the user's.
bool IsInternalViewName(const std::string& name) {
  return name.starts_with("__") || name.find(':') != std::string::npos;
}

}  // namespace

// Spark's answer: namespace, tableName, isTemporary; the warehouse's tables in `default`, then
// the session's temporary views with an empty namespace, names lower-cased (Spark's catalog
// keeps them so).
Result<engine::Batch> TableStatementExecutor::Run(const ShowTablesStatement& s) {
  if (s.schema && !AsciiEqualsIgnoreCase(*s.schema, "default")) {
    return Status::NotFound("[SCHEMA_NOT_FOUND] The schema `" + *s.schema +
                            "` cannot be found: a Sluice warehouse has the one schema `default`");
  }
  std::vector<std::regex> patterns;
  if (s.pattern) {
    SLUICE_ASSIGN_OR_RETURN(patterns, ShowTablesPattern(*s.pattern));
  }
  std::vector<std::vector<std::optional<std::string>>> rows;
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> tables, catalog_->ListTables());
  for (const std::string& t : tables) {
    if (MatchesAny(patterns, t)) rows.push_back({"default", t, "false"});
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> views, engine::TemporaryViewNames(conn_));
  std::set<std::string> seen;
  for (const std::string& v : views) {
    const std::string lower = AsciiLower(v);
    if (IsInternalViewName(v) || !seen.insert(lower).second) continue;
    if (MatchesAny(patterns, lower)) rows.push_back({"", lower, "true"});
  }
  return LiteralRows(conn_, {{"namespace"}, {"tableName"}, {"isTemporary", "BOOLEAN"}}, rows);
}

}  // namespace sluice::sql
