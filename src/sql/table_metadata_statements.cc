// TableStatementExecutor's SHOW TBLPROPERTIES and SHOW CREATE TABLE, and the detailed section of
// DESCRIBE EXTENDED (rows built by sql/table_metadata_rows.h).
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

std::vector<std::vector<std::optional<std::string>>> TableStatementExecutor::DetailedRows(
    const TableName& name, const std::string& path, const delta::Snapshot& snapshot) const {
  return DetailedTableInformation(IdentityOf(name.name, name.is_path, path, catalog_->warehouse()),
                                  snapshot);
}

}  // namespace sluice::sql
