// What SHOW TBLPROPERTIES, SHOW CREATE TABLE and DESCRIBE [TABLE] EXTENDED show of a Delta table
// (docs/sql-reference.md "Delta tables"), in Spark's rows, as Spark 4.2 with Delta 4 answers
// them (asked: docs/differences.md "Catalog statements"):
//
//   SHOW TBLPROPERTIES t            key, value: the table's configuration, then
//                                   delta.minReaderVersion / delta.minWriterVersion and, for a
//                                   protocol with table features, delta.feature.<name> =
//                                   supported (Delta's Snapshot.getProperties), sorted by key;
//                                   secret values redacted (common/redaction.h)
//   SHOW TBLPROPERTIES t ('k')      the one row; a missing key's value is "Table
//                                   spark_catalog.default.t does not have property: k"
//                                   (spark_catalog.delta.`/path` for a path table)
//   DESCRIBE EXTENDED t             DESCRIBE's rows, then '' / '# Detailed Table Information' and
//                                   Catalog, Namespace, Database, Table, Type, [Comment],
//                                   Location, Provider, [Is_managed_location], Table Properties
//                                   ("[k=v,k=v]", the SHOW TBLPROPERTIES pairs)
//   SHOW CREATE TABLE t             createtab_stmt: Spark's layout of a CREATE TABLE (columns
//                                   in the schema's order with Spark's DDL types, NOT NULL,
//                                   COMMENT; USING delta;
//                                   PARTITIONED BY; COMMENT; LOCATION; TBLPROPERTIES), a
//                                   statement that makes the same table (Delta itself refuses
//                                   SHOW CREATE TABLE; Databricks answers it so)
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "delta/snapshot.h"

namespace sluice::sql {

// How Spark's catalog names a table: spark_catalog.default.t, or delta.`/path` for a path.
struct TableIdentity {
  std::string name_space;  // "default", or "delta" for a path table
  std::string table;       // the name, or the path
  std::string location;    // as Spark shows it: file:/abs/path for a named table, else the path
  bool managed = true;     // in the warehouse's own directory (not created with LOCATION)
  bool is_path = false;

  // spark_catalog.default.t / delta.`/path`.
  std::string QualifiedName() const;
};

// The identity of the table `table` of the warehouse `warehouse`, whose files are at `path`.
TableIdentity IdentityOf(const std::string& name, bool is_path, const std::string& path,
                         const std::string& warehouse);

// The (key, value) pairs of SHOW TBLPROPERTIES, sorted by key, secrets redacted.
std::vector<std::pair<std::string, std::string>> TableProperties(const delta::Snapshot& snapshot);

// The value SHOW TBLPROPERTIES t ('key') shows for `key`.
std::string TablePropertyValue(const TableIdentity& id, const delta::Snapshot& snapshot,
                               const std::string& key);

// The rows DESCRIBE EXTENDED adds after DESCRIBE's (col_name, data_type, comment).
std::vector<std::vector<std::optional<std::string>>> DetailedTableInformation(
    const TableIdentity& id, const delta::Snapshot& snapshot);

// SHOW CREATE TABLE's statement (ends with a newline, as Spark's).
std::string CreateTableStatementText(const TableIdentity& id, const delta::Snapshot& snapshot);

}  // namespace sluice::sql
