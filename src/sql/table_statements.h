// The syntax trees of the Delta table statements of docs/sql-reference.md ("Tables"). Clauses that
// are expressions or queries are kept as the original SQL text, to be run by the engine.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace sluice::sql {

// A table as written: a name resolved in the warehouse, or delta.`/path` (Spark's form).
struct TableName {
  std::string name;  // the name, or the path when is_path
  bool is_path = false;

  bool operator==(const TableName&) const = default;
};

struct ColumnDefinition {
  std::string name;
  std::string type_sql;  // the type as written, e.g. "DECIMAL(10, 2)", "STRUCT(a INT)"
  bool not_null = false;
  std::optional<std::string> comment;
};

using Properties = std::map<std::string, std::string>;

struct CreateTableStatement {
  bool or_replace = false;    // CREATE OR REPLACE TABLE, or REPLACE TABLE
  bool replace_only = false;  // REPLACE TABLE: the table must exist
  bool if_not_exists = false;
  TableName table;
  std::vector<ColumnDefinition> columns;  // empty for CREATE TABLE ... AS SELECT
  std::vector<std::string> partitioned_by;
  std::optional<std::string> location;
  Properties properties;                // TBLPROPERTIES
  std::optional<std::string> comment;   // COMMENT '...': the table's description
  std::optional<std::string> as_query;  // CREATE TABLE ... AS <query>
};

struct InsertStatement {
  TableName table;
  bool overwrite = false;            // INSERT OVERWRITE [TABLE]
  bool by_name = false;              // INSERT INTO t BY NAME
  std::vector<std::string> columns;  // INSERT INTO t (a, b) ...
  std::string query;                 // VALUES (...) or SELECT ... as written
};

struct Assignment {
  std::string column;
  std::string expression;
};

struct UpdateStatement {
  TableName table;
  std::optional<std::string> alias;
  std::vector<Assignment> assignments;
  std::optional<std::string> where;
};

struct DeleteStatement {
  TableName table;
  std::optional<std::string> alias;
  std::optional<std::string> where;
};

enum class MergeMatch { kMatched, kNotMatchedByTarget, kNotMatchedBySource };
enum class MergeAction { kUpdate, kUpdateStar, kDelete, kInsert, kInsertStar };

struct MergeClause {
  MergeMatch match = MergeMatch::kMatched;
  std::optional<std::string> condition;  // WHEN ... AND <condition>
  MergeAction action = MergeAction::kUpdate;
  std::vector<Assignment> assignments;      // UPDATE SET
  std::vector<std::string> insert_columns;  // INSERT (cols)
  std::vector<std::string> insert_values;   // VALUES (exprs)
};

struct MergeStatement {
  TableName target;
  std::optional<std::string> target_alias;
  std::string source;  // a table name or "(query)" as written
  std::optional<std::string> source_alias;
  std::string on;
  std::vector<MergeClause> clauses;
};

struct AlterTableAddColumnsStatement {
  TableName table;
  std::vector<ColumnDefinition> columns;
};

struct AlterTableSetPropertiesStatement {
  TableName table;
  Properties properties;
};

// ALTER TABLE t RENAME COLUMN a[.b...] TO c (column mapping, docs/delta.md).
struct AlterTableRenameColumnStatement {
  TableName table;
  std::vector<std::string> column;  // the path as written: "s", "x" for s.x
  std::string new_name;
};

// ALTER TABLE t DROP COLUMN[S] [IF EXISTS] a[, b...] or (a, b) (column mapping).
struct AlterTableDropColumnsStatement {
  TableName table;
  std::vector<std::vector<std::string>> columns;
  bool if_exists = false;
};

struct DescribeStatement {
  enum class Kind { kTable, kHistory, kDetail };
  Kind kind = Kind::kTable;
  TableName table;
  std::optional<int64_t> limit;  // DESCRIBE HISTORY t LIMIT n
  bool extended = false;         // DESCRIBE [TABLE] EXTENDED | FORMATTED t
};

// SHOW TBLPROPERTIES t [('key')] (sql/table_metadata_rows.h).
struct ShowTblPropertiesStatement {
  TableName table;
  std::optional<std::string> key;
};

// SHOW CREATE TABLE t (sql/table_metadata_rows.h).
struct ShowCreateTableStatement {
  TableName table;
};

struct VacuumStatement {
  TableName table;
  std::optional<double> retain_hours;
  bool dry_run = false;
};

// OPTIMIZE t [WHERE ...], and REORG TABLE t [WHERE ...] APPLY (PURGE) (purge).
struct OptimizeStatement {
  TableName table;
  std::optional<std::string> where;
  bool purge = false;
};

struct RestoreStatement {
  TableName table;
  std::optional<int64_t> version;
  std::optional<std::string> timestamp;
};

struct DropTableStatement {
  TableName table;
  bool if_exists = false;
};

// SHOW TABLES [{FROM | IN} schema] [[LIKE] 'pattern'].
struct ShowTablesStatement {
  std::optional<std::string> schema;   // as written; only Spark's `default` exists
  std::optional<std::string> pattern;  // Spark's: '*' any text, '|' alternatives, no case
};

using TableStatement =
    std::variant<CreateTableStatement, InsertStatement, UpdateStatement, DeleteStatement,
                 MergeStatement, AlterTableAddColumnsStatement, AlterTableSetPropertiesStatement,
                 AlterTableRenameColumnStatement, AlterTableDropColumnsStatement, DescribeStatement,
                 VacuumStatement, OptimizeStatement, RestoreStatement, DropTableStatement,
                 ShowTablesStatement, ShowTblPropertiesStatement, ShowCreateTableStatement>;

}  // namespace sluice::sql
