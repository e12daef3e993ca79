// Executes the Delta table statements of docs/sql-reference.md (parsed by table_statement_parser.h)
// with the Delta reader and writer. Queries inside them (AS SELECT, INSERT ... SELECT/VALUES) run
// in the engine, where Delta tables are readable by name (TableResolver in session.cc).
//
// Ownership: borrows everything; the Session that owns it outlives it.
// Thread safety: used by the Session's thread only.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "delta/dml_util.h"
#include "delta/snapshot.h"
#include "delta/table_writer.h"
#include "engine/engine.h"
#include "fs/file_system.h"
#include "sql/settings.h"
#include "sql/table_catalog.h"
#include "sql/table_statements.h"

namespace sluice::sql {

class TableStatementExecutor {
 public:
  TableStatementExecutor(std::shared_ptr<fs::FileSystem> fs, engine::Engine* engine,
                         engine::Connection* conn, TableCatalog* catalog, const Settings* settings);

  // Runs `statement`; returns its rows (DESCRIBE ...) or a one-row summary such as
  // num_affected_rows for writes, like Databricks SQL.
  Result<engine::Batch> Execute(const TableStatement& statement);

  // Delta's idempotent DML: the SQL confs spark.databricks.delta.write.txnAppId / txnVersion,
  // which Delta 4.4 reads for MERGE, UPDATE, DELETE and INSERT as for DataFrame writes. While
  // set, such a statement on a table that already records txn.app_id at a version >=
  // txn.version changes nothing and commits nothing (its counts are 0); otherwise its commit
  // carries the txn action, so change and txn are one atomic step. nullopt (the default): off.
  void SetIdempotentTxn(std::optional<delta::SetTransaction> txn) { txn_ = std::move(txn); }

 private:
  Result<engine::Batch> Run(const CreateTableStatement& s);
  Result<engine::Batch> Run(const InsertStatement& s);
  Result<engine::Batch> Run(const DropTableStatement& s);
  Result<engine::Batch> Run(const DescribeStatement& s);
  Result<engine::Batch> Run(const AlterTableAddColumnsStatement& s);
  Result<engine::Batch> Run(const AlterTableSetPropertiesStatement& s);
  Result<engine::Batch> Run(const AlterTableRenameColumnStatement& s);
  Result<engine::Batch> Run(const AlterTableDropColumnsStatement& s);
  Result<engine::Batch> Run(const UpdateStatement& s);
  Result<engine::Batch> Run(const DeleteStatement& s);
  Result<engine::Batch> Run(const MergeStatement& s);
  Result<engine::Batch> Run(const VacuumStatement& s);
  Result<engine::Batch> Run(const OptimizeStatement& s);
  Result<engine::Batch> Run(const RestoreStatement& s);
  Result<engine::Batch> Run(const ShowTablesStatement& s);
  // table_metadata_statements.cc
  Result<engine::Batch> Run(const ShowTblPropertiesStatement& s);
  Result<engine::Batch> Run(const ShowCreateTableStatement& s);
  // DESCRIBE v of a view of the session (it shadows a table of its name, as in Spark): its
  // columns with Spark's type names (spark_typeof); nullopt when no view has that name.
  Result<std::optional<engine::Batch>> DescribeView(const DescribeStatement& s);
  // The rows DESCRIBE EXTENDED adds after the columns.
  std::vector<std::vector<std::optional<std::string>>> DetailedRows(
      const TableName& name, const std::string& path, const delta::Snapshot& snapshot) const;

  // The table's path, NotFound ("table t does not exist in warehouse W") when it has no log.
  Result<std::string> ExistingTablePath(const TableName& table);
  Result<engine::Batch> AffectedRows(int64_t n);
  // A writer on an existing table and the DML handle over it (the writer is kept in *writer).
  Result<delta::DmlTable> OpenDml(const TableName& table,
                                  std::unique_ptr<delta::DeltaTableWriter>* writer);
  // True when txn_ is set and the table of `writer` already records it: the DML is skipped.
  Result<bool> TxnAlreadyCommitted(delta::DeltaTableWriter* writer);

  std::shared_ptr<fs::FileSystem> fs_;
  engine::Engine* engine_;
  engine::Connection* conn_;
  TableCatalog* catalog_;
  const Settings* settings_;
  std::optional<delta::SetTransaction> txn_;
};

// "t" or "delta.`/path`", for messages.
std::string DisplayName(const TableName& table);

// The schema CREATE TABLE gives column definitions (Spark's or the engine's type spellings,
// TIMESTAMP an instant, NOT NULL kept). InvalidArgument naming a column of unknown type.
Result<engine::Schema> ColumnDefinitionsSchema(const std::vector<ColumnDefinition>& columns);

}  // namespace sluice::sql
