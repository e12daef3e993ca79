// Session: runs Sluice SQL statements against one warehouse.
//
// A Session owns an engine (src/engine), the session's settings and the warehouse's table
// catalog. It recognises the statements Sluice handles itself (`SET/RESET sluice.<name>`, the
// Delta table statements, the streaming and sink statements of docs/sql-reference.md) and hands
// every other statement to the engine, where Delta tables of the warehouse are readable by name
// (docs/sql-frontend.md) and `streaming_progress('name')` and `read_state('name')` are relations.
//
// Streaming tables (streaming_table_manager.h) run in the session's process: REFRESH returns
// when its run ends; what Spark keeps only in memory (per-source watermarks) lives as long as
// the Session.
//
// Thread safety: a Session is used by one thread at a time, except Interrupt().
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "delta/table.h"
#include "engine/engine.h"
#include "sql/session_temp_views.h"
#include "sql/settings.h"
#include "sql/streaming_table_manager.h"
#include "sql/table_catalog.h"
#include "sql/table_statement_executor.h"

namespace sluice::sql {

struct SessionOptions {
  // Directory where table names resolve; created when missing. Relative paths resolve against
  // the process's working directory.
  std::string warehouse = "warehouse";
  engine::EngineOptions engine;
};

class Session {
 public:
  static Result<std::unique_ptr<Session>> Open(const SessionOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs one statement (no trailing ';' needed) and returns its rows; statements without rows
  // give an empty batch. The error message is meant for users: it says what failed and where.
  Result<engine::Batch> Execute(std::string_view statement);

  // Cancels the statement Execute is running on another thread (the shell's Ctrl-C): a query of
  // the engine fails with Cancelled and changes nothing (a Delta write that had not committed
  // leaves no version); a REFRESH stops at its next batch boundary and fails with Cancelled.
  // Thread-safe; does nothing when no statement runs.
  void Interrupt();

  // Checks a pipeline's CREATE STREAMING TABLE or CREATE FLOW, as written (Spark's dialect),
  // against its inputs' schemas and against its existing checkpoint:
  // StreamingTableManager::CheckDefinition after the dialect's rewrite. Creates, runs and writes
  // nothing.
  Result<std::optional<engine::Schema>> CheckStreamingDefinition(
      std::string_view statement, const StreamingTableManager::PendingSchemas& pending);
  // The schema of the rows of the batch query `query` (Spark's dialect), with each dataset of
  // `pending` that has no table yet read as an empty relation of its schema: a materialized
  // view's check. Runs the query with LIMIT 0; writes nothing.
  Result<engine::Schema> CheckQuerySchema(std::string_view query,
                                          const StreamingTableManager::PendingSchemas& pending);

  // Delta's idempotent DML for the statements that follow (TableStatementExecutor::
  // SetIdempotentTxn): Spark Connect sets it from the session's
  // spark.databricks.delta.write.txnAppId / txnVersion confs around a statement.
  void SetIdempotentTxn(std::optional<delta::SetTransaction> txn);

  const Settings& settings() const { return settings_; }
  // The streaming tables and flows of the warehouse (sluice run starts them through it).
  StreamingTableManager& streaming() { return *streaming_; }
  const std::string& warehouse() const { return warehouse_; }

 private:
  Session(std::string warehouse, std::unique_ptr<engine::Engine> engine,
          std::unique_ptr<engine::Connection> connection);

  // Makes each Delta table that `statement` reads a view on the connection (delta_references.h)
  // and returns the statement rewritten to use them. Views made for earlier statements are
  // dropped first, so a dropped or replaced table is never read through a stale view.
  Result<std::string> PrepareDeltaViews(std::string_view statement);
  // The cached reader of the table at `path` (snapshots are refreshed on each use).
  Result<delta::DeltaTable*> TableAt(const std::string& path);
  void ResetCatalog();
  void ResetStreaming();

  // Makes each streaming_progress('name') of `statement` a view; returns the rewritten text.
  Result<std::string> PrepareProgressViews(std::string_view statement);
  // Makes each read_state('name'[, operator]) of `statement` a relation (sql/read_state.h);
  // returns the rewritten text.
  Result<std::string> PrepareReadStateViews(std::string_view statement);
  // read_kafka(...) without STREAM: a batch read of Kafka (sql/kafka_batch_read.h).
  Result<std::string> PrepareKafkaBatchViews(std::string_view statement);
  // DROP TABLE of a streaming table also removes its definition and checkpoint.
  Result<engine::Batch> Drop(const DropTableStatement& drop);

  // Handles SET/RESET of sluice.* settings. Returns true in *handled when it was one.
  Status MaybeHandleSetting(std::string_view statement, bool* handled);

  std::string warehouse_;
  Settings settings_;
  std::unique_ptr<engine::Engine> engine_;  // outlives connection_
  std::unique_ptr<engine::Connection> connection_;
  std::unique_ptr<TableCatalog> catalog_;
  std::unique_ptr<TableStatementExecutor> executor_;
  std::unique_ptr<StreamingTableManager> streaming_;
  std::map<std::string, std::unique_ptr<delta::DeltaTable>> tables_;  // by path
  std::vector<std::string> temp_views_;    // views PrepareDeltaViews created
  std::vector<std::string> temp_batches_;  // batches PrepareDeltaViews registered
  // The user's temporary views and the Delta tables they read; the statement's own Delta
  // references (PrepareDeltaViews), recorded for a CREATE TEMP VIEW.
  SessionTempViews user_views_;
  std::vector<DeltaReference> statement_references_;
  // During CheckQuerySchema: the names (lower case) read as the check's empty relations.
  std::set<std::string> check_relations_;
  std::optional<delta::SetTransaction> idempotent_txn_;  // kept across ResetCatalog
};

}  // namespace sluice::sql
