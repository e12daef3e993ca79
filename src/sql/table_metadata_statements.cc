// TableStatementExecutor's SHOW TBLPROPERTIES and SHOW CREATE TABLE, and the detailed section of
// DESCRIBE EXTENDED (rows built by sql/table_metadata_rows.h).
#include "common/strings.h"
#include "delta/table.h"
#include "sql/literal_rows.h"
#include "sql/table_metadata_rows.h"
#include "sql/table_statement_executor.h"

namespace sluice::sql {

Result<engine::Batch> TableStatementExecutor::Run(const ShowTblPropertiesStatement& s) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, ExistingTablePath(s.table));
  SLUICE_ASSIGN_OR_RETURN(auto table, delta::DeltaTable::Open(fs_, engine_, path));
  SLUICE_ASSIGN_OR_RETURN(auto snapshot, table->Latest());
  std::vector<std::vector<std::optional<std::string>>> rows;
  if (s.key) {
    const TableIdentity id = IdentityOf(s.table.name, s.table.is_path, path, catalog_->warehouse());
    rows.push_back({*s.key, TablePropertyValue(id, *snapshot, *s.key)});
  } else {
    for (const auto& [k, v] : TableProperties(*snapshot)) rows.push_back({k, v});
  }
  return LiteralRows(conn_, {{"key"}, {"value"}}, rows);
}

Result<engine::Batch> TableStatementExecutor::Run(const ShowCreateTableStatement& s) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, ExistingTablePath(s.table));
  SLUICE_ASSIGN_OR_RETURN(auto table, delta::DeltaTable::Open(fs_, engine_, path));
  SLUICE_ASSIGN_OR_RETURN(auto snapshot, table->Latest());
  const TableIdentity id = IdentityOf(s.table.name, s.table.is_path, path, catalog_->warehouse());
  return LiteralRows(conn_, {{"createtab_stmt"}}, {{CreateTableStatementText(id, *snapshot)}});
}

Result<std::optional<engine::Batch>> TableStatementExecutor::DescribeView(
    const DescribeStatement& s) {
  SLUICE_ASSIGN_OR_RETURN(engine::Batch found,
                          conn_->Query("SELECT view_name FROM duckdb_views() WHERE NOT internal "
                                       "AND lower(view_name) = lower(" +
                                       QuoteLiteral(s.table.name) + ")"));
  if (found.num_rows() == 0) return std::optional<engine::Batch>();
  const std::string view = QuoteIdentifier(found.GetString(0, 0).value_or(s.table.name));
  if (s.extended) {
    return Status::NotSupported("DESCRIBE EXTENDED of the view " + s.table.name +
                                " is not supported: DESCRIBE " + s.table.name +
                                " shows its columns");
  }
  const std::string ctx = "DESCRIBE " + s.table.name;
  SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch empty,
                              conn_->Query("SELECT * FROM " + view + " LIMIT 0"), ctx);
  // One row of NULLs of the view's types (its columns joined to one row), for spark_typeof.
  std::string types;
  for (const engine::Field& f : empty.schema()) {
    types += (types.empty() ? "" : ", ") + std::string("spark_typeof(__v.") +
             QuoteIdentifier(f.name) + ")";
  }
  std::vector<std::vector<std::optional<std::string>>> rows;
  if (!types.empty()) {
    SLUICE_ASSIGN_OR_RETURN_CTX(
        engine::Batch spark_types,
        conn_->Query("SELECT " + types + " FROM (SELECT 1) AS __one LEFT JOIN (SELECT * FROM " +
                     view + " LIMIT 0) AS __v ON true"),
        ctx);
    for (size_t i = 0; i < empty.schema().size(); ++i) {
      rows.push_back({empty.schema()[i].name, spark_types.GetString(0, i), std::nullopt});
    }
  }
  SLUICE_ASSIGN_OR_RETURN(engine::Batch out,
                          LiteralRows(conn_, {{"col_name"}, {"data_type"}, {"comment"}}, rows));
  return std::optional<engine::Batch>(std::move(out));
}

std::vector<std::vector<std::optional<std::string>>> TableStatementExecutor::DetailedRows(
    const TableName& name, const std::string& path, const delta::Snapshot& snapshot) const {
  return DetailedTableInformation(IdentityOf(name.name, name.is_path, path, catalog_->warehouse()),
                                  snapshot);
}

}  // namespace sluice::sql
