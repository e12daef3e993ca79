// DeltaTable: programmatic access to one Delta table (Delta Lake's io.delta.tables.DeltaTable):
// read it, change it with DELETE / UPDATE / MERGE, maintain it (VACUUM, OPTIMIZE, RESTORE) and
// inspect it (history, detail). docs/delta-dml.md describes what each operation commits.
//
//   SLUICE_ASSIGN_OR_RETURN(auto events, sluice::DeltaTable::ForName(session.get(), "events"));
//   SLUICE_ASSIGN_OR_RETURN(sluice::Rows rows, events->Scan("kind = 'click'"));
//   SLUICE_RETURN_NOT_OK(events->Delete("ts < TIMESTAMPTZ '2024-01-01'").status());
//   SLUICE_RETURN_NOT_OK(events->Update({{"kind", "upper(kind)"}}, "kind = 'view'").status());
//
//   // Exactly-once upserts from foreachBatch: the commit records (appId, batch id), and a
//   // re-run of a batch already committed changes nothing.
//   auto merged = events->Merge(batch_frame, "s", "t.id = s.id")
//                     .WhenMatchedUpdateAll()
//                     .WhenNotMatchedInsertAll()
//                     .Execute({.txn_app_id = "upsert-events", .txn_version = batch_id});
//
// Expressions and conditions are SQL text in the engine's dialect (DuckDB's), evaluated on the
// table's rows; in Update/Merge they may name target columns qualified by the target alias
// ("t" unless MergeBuilder::TargetAlias says otherwise) and, in Merge, source columns by the
// source alias.
//
// Errors (Status codes): NotFound when there is no Delta table at the path (or a time-travel
// version does not exist); NotSupported for tables whose protocol Sluice cannot read or write;
// InvalidArgument for bad expressions, unknown columns and misuse (messages name the column or
// clause); Conflict when a concurrent commit to the table clashed with this operation (nothing
// was committed; retry the operation); IOError for storage failures. A failed operation commits
// nothing.
//
// Ownership: ForPath/ForName return an owned object. A table opened through a Session shares
// that session's engine and file system (the Session may be destroyed first; the engine lives as
// long as the table). A table opened without a session owns a private engine. Rows returned by
// the table are independent values.
// Thread safety: all methods may be called from several threads; operations on one DeltaTable
// object are serialized. Several DeltaTable objects, in one process or many, may change the same
// table concurrently (optimistic concurrency, Conflict on a logical clash).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sluice/dataframe.h"
#include "sluice/result.h"
#include "sluice/rows.h"

namespace sluice {

class Session;

namespace api {
struct DeltaTableState;  // internal: engine, reader, writer of the table
}

// Opening a table without a Session.
struct DeltaTableOptions {
  // Engine worker threads of the table's private engine.
  int engine_threads = 1;
  // fsync data files and commits (false only for tests and benchmarks).
  bool sync = true;
};

// What a DELETE / UPDATE / MERGE / OPTIMIZE / RESTORE did.
struct DeltaOperationResult {
  // The version it committed; nullopt when nothing changed (no commit) or when the write was
  // skipped as already committed (txn_app_id/txn_version).
  std::optional<int64_t> version;
  bool skipped = false;  // Merge with a txn (appId, version) the table already records
  // commitInfo.operationMetrics with Spark's names (numDeletedRows, numUpdatedRows,
  // numTargetRowsInserted, numRemovedFiles, ...).
  std::map<std::string, int64_t> metrics;
};

class DeltaTable;

// Builds a MERGE (DeltaTable::Merge). Clauses are evaluated in the order added within each kind
// (matched, not matched, not matched by source); the first whose condition holds applies; only the
// last clause of a kind may omit its condition. A target row matched by several source rows
// fails the merge (InvalidArgument, Spark's message), as Spark does.
// Ownership: refers to its DeltaTable, which must outlive it. Thread safety: one thread.
class MergeBuilder {
 public:
  // Alias of the target table in conditions and expressions ("t" by default).
  MergeBuilder& TargetAlias(std::string alias);

  // WHEN MATCHED [AND condition] THEN UPDATE SET column = expression, ...
  MergeBuilder& WhenMatchedUpdate(std::map<std::string, std::string> set,
                                  std::optional<std::string> condition = std::nullopt);
  // WHEN MATCHED [AND condition] THEN UPDATE SET * (every target column from the source column
  // of the same name).
  MergeBuilder& WhenMatchedUpdateAll(std::optional<std::string> condition = std::nullopt);
  // WHEN MATCHED [AND condition] THEN DELETE
  MergeBuilder& WhenMatchedDelete(std::optional<std::string> condition = std::nullopt);
  // WHEN NOT MATCHED [AND condition] THEN INSERT (column, ...) VALUES (expression, ...);
  // columns not given are NULL.
  MergeBuilder& WhenNotMatchedInsert(std::map<std::string, std::string> values,
                                     std::optional<std::string> condition = std::nullopt);
  // WHEN NOT MATCHED [AND condition] THEN INSERT *
  MergeBuilder& WhenNotMatchedInsertAll(std::optional<std::string> condition = std::nullopt);
  // WHEN NOT MATCHED BY SOURCE [AND condition] THEN UPDATE SET ... / DELETE
  MergeBuilder& WhenNotMatchedBySourceUpdate(std::map<std::string, std::string> set,
                                             std::optional<std::string> condition = std::nullopt);
  MergeBuilder& WhenNotMatchedBySourceDelete(std::optional<std::string> condition = std::nullopt);

  struct ExecuteOptions {
    // Idempotency (foreachBatch): when both are set, the merge is skipped (result.skipped) if
    // the table already records txn_app_id at a version >= txn_version; otherwise its commit
    // carries txn{appId, version}, atomically with the merge. Set both or neither.
    std::optional<std::string> txn_app_id;
    std::optional<int64_t> txn_version;
  };
  // Runs the merge: one commit (none when nothing changes).
  Result<DeltaOperationResult> Execute(const ExecuteOptions& options);
  Result<DeltaOperationResult> Execute();

 private:
  friend class DeltaTable;
  enum class When { kMatched, kNotMatched, kNotMatchedBySource };
  enum class Action { kUpdate, kUpdateAll, kDelete, kInsert, kInsertAll };
  struct Clause {
    When when = When::kMatched;
    Action action = Action::kUpdate;
    std::optional<std::string> condition;
    std::vector<std::pair<std::string, std::string>> assignments;
  };
  MergeBuilder(DeltaTable* table, std::string source_alias, std::string condition);

  DeltaTable* table_;
  std::optional<DataFrame> source_frame_;  // collected by Execute
  std::optional<Rows> source_rows_;
  std::string source_sql_;  // or SQL text (a query, or a relation the engine can read)
  std::string source_alias_;
  std::string condition_;
  std::string target_alias_ = "t";
  std::vector<Clause> clauses_;
};

class DeltaTable {
 public:
  // The Delta table at `path`, using the session's engine and file system. NotFound when `path`
  // holds no Delta log.
  static Result<std::unique_ptr<DeltaTable>> ForPath(Session* session, const std::string& path);
  // The warehouse table `name` of the session (Session::TablePath).
  static Result<std::unique_ptr<DeltaTable>> ForName(Session* session, const std::string& name);
  // The Delta table at `path` with a private engine (no session).
  static Result<std::unique_ptr<DeltaTable>> ForPath(const std::string& path,
                                                     const DeltaTableOptions& options = {});
  ~DeltaTable();
  DeltaTable(const DeltaTable&) = delete;
  DeltaTable& operator=(const DeltaTable&) = delete;

  const std::string& path() const;

  // The latest version.
  Result<int64_t> Version();
  // The rows of the latest version (or of `version`, time travel), table columns in schema
  // order, restricted to rows where `condition` (SQL over the table's columns) is true when it
  // is not empty. Files are skipped by partition values and stats where the condition allows.
  Result<Rows> Scan(const std::string& condition = "",
                    std::optional<int64_t> version = std::nullopt);
  // The table as a batch DataFrame of the session it was opened with (its latest data when the
  // frame runs). A table opened without a session gives an invalid frame (status()
  // InvalidArgument).
  DataFrame ToDF();

  // DESCRIBE HISTORY: one row per commit, newest first (version, timestamp, operation,
  // operationParameters, readVersion, isBlindAppend, operationMetrics, engineInfo, ...); at most
  // `limit` rows when given.
  Result<Rows> History(std::optional<int64_t> limit = std::nullopt);
  // DESCRIBE DETAIL as one JSON object (format, id, location, createdAt, lastModified,
  // partitionColumns, numFiles, sizeInBytes, properties, minReaderVersion, minWriterVersion).
  Result<std::string> DetailAsJson();
  // The latest txn version the table records for `app_id` (foreachBatch / streaming sinks).
  Result<std::optional<int64_t>> LatestTxnVersion(const std::string& app_id);

  // DELETE FROM t [WHERE condition] (empty: every row).
  Result<DeltaOperationResult> Delete(const std::string& condition = "");
  // UPDATE t SET column = expression, ... [WHERE condition]. Expressions see the old row.
  Result<DeltaOperationResult> Update(const std::map<std::string, std::string>& set,
                                      const std::string& condition = "");
  // MERGE INTO t USING source ON condition: add clauses to the builder, then Execute.
  // `source` (a batch DataFrame) is collected when Execute runs.
  MergeBuilder Merge(const DataFrame& source, const std::string& source_alias,
                     const std::string& condition);
  // Same, with the source rows given directly.
  MergeBuilder Merge(const Rows& source, const std::string& source_alias,
                     const std::string& condition);
  // Same, with the source as SQL text: a query ("SELECT ...", "VALUES ...") or the name of a
  // relation the engine can read (a warehouse table when opened through a session).
  MergeBuilder MergeSql(const std::string& source_sql, const std::string& source_alias,
                        const std::string& condition);

  // VACUUM: deletes files no longer referenced by the table and older than the retention
  // (`retain_hours`, default the table's delta.deletedFileRetentionDuration, 7 days). A shorter
  // retention than the table's is refused (InvalidArgument) unless `retention_check` is false.
  // Returns the storage paths deleted (or, with `dry_run`, that would be).
  Result<std::vector<std::string>> Vacuum(std::optional<double> retain_hours = std::nullopt,
                                          bool dry_run = false, bool retention_check = true);
  // OPTIMIZE [WHERE partition_predicate]: bin-packs small files (dataChange=false).
  Result<DeltaOperationResult> Optimize(const std::string& partition_predicate = "");
  // RESTORE TABLE t TO VERSION AS OF `version`: one commit that makes the table's files those of
  // `version`. NotFound when a file of that version was vacuumed.
  Result<DeltaOperationResult> RestoreToVersion(int64_t version);

 private:
  friend class MergeBuilder;
  explicit DeltaTable(std::unique_ptr<api::DeltaTableState> state);
  Result<DeltaOperationResult> RunMerge(const MergeBuilder& builder,
                                        const MergeBuilder::ExecuteOptions& options);
  std::unique_ptr<api::DeltaTableState> state_;
};

}  // namespace sluice
