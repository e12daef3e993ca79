#include "sql/table_catalog.h"

#include "common/strings.h"
#include "delta/warehouse_tables.h"

namespace sluice::sql {

std::string NormalizeTableName(const std::string& name) { return AsciiLower(name); }

TableCatalog::TableCatalog(std::shared_ptr<fs::FileSystem> fs, std::string warehouse)
    : fs_(std::move(fs)), warehouse_(std::move(warehouse)) {}

Result<std::string> TableCatalog::Resolve(const TableName& table) const {
  if (table.is_path) return table.name;
  return delta::ResolveWarehouseTable(fs_.get(), warehouse_, table.name);
}

Result<bool> TableCatalog::Exists(const TableName& table) const {
  SLUICE_ASSIGN_OR_RETURN(std::string path, Resolve(table));
  return fs_->Exists(fs::JoinPath(path, "_delta_log"));
}

Status TableCatalog::RegisterLocation(const std::string& name, const std::string& location) {
  return delta::WriteLocationRecord(fs_.get(), warehouse_, name, location);
}

Status TableCatalog::UnregisterLocation(const std::string& name) {
  return delta::DeleteLocationRecord(fs_.get(), warehouse_, name);
}

Result<std::vector<std::string>> TableCatalog::ListTables() const {
  return delta::ListWarehouseTables(fs_.get(), warehouse_);
}

}  // namespace sluice::sql
