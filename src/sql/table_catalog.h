// TableCatalog: where the tables of a warehouse live.
//
// A table name `t` resolves to <warehouse>/t, unless CREATE TABLE t ... LOCATION '<path>' put it
// elsewhere: then <warehouse>/_sluice/tables/t.json records {"name":"t","location":"<path>"}
// (delta/warehouse_tables.h, shared with the C++ API's Session). A path (delta.`/data/silver`) is
// itself. Names are case-insensitive as in Spark: they are stored lower-cased. The catalog holds
// no other state: a Delta table is its directory.
//
// Thread safety: stateless apart from the warehouse path; safe from several threads.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "fs/file_system.h"
#include "sql/table_statements.h"

namespace sluice::sql {

class TableCatalog {
 public:
  TableCatalog(std::shared_ptr<fs::FileSystem> fs, std::string warehouse);

  // The table's directory (whether or not a table exists there). InvalidArgument for names
  // that cannot be directory names ("", ".", "..", containing '/', starting with '_').
  Result<std::string> Resolve(const TableName& table) const;
  // True when the table's directory holds a Delta log.
  Result<bool> Exists(const TableName& table) const;
  // Records that `name` lives at `location` (CREATE TABLE ... LOCATION).
  Status RegisterLocation(const std::string& name, const std::string& location);
  // Forgets a LOCATION record (DROP TABLE); OK when there is none.
  Status UnregisterLocation(const std::string& name);
  // Names of the tables in the warehouse (directories holding a _delta_log, plus LOCATION
  // records), sorted.
  Result<std::vector<std::string>> ListTables() const;

  const std::string& warehouse() const { return warehouse_; }

 private:
  std::shared_ptr<fs::FileSystem> fs_;
  std::string warehouse_;
};

// Lower-cases an ASCII name.
std::string NormalizeTableName(const std::string& name);

}  // namespace sluice::sql
