// DeltaTableWriter: the writing facade of one Delta table (create, append, overwrite,
// partitioned writes, schema evolution, table properties, idempotent txn writes, checkpoints and
// log cleanup). docs/delta-writer.md describes what each operation commits.
//
//   SLUICE_ASSIGN_OR_RETURN(auto w, delta::DeltaTableWriter::Open(fs, engine, "/warehouse/t"));
//   delta::WriteOptions opts;               // append; creates the table when absent
//   opts.partition_by = {"day"};
//   opts.txn_app_id = query_id; opts.txn_version = batch_id;   // idempotent streaming sink
//   SLUICE_ASSIGN_OR_RETURN(delta::WriteResult r, w->Write(batch, opts));
//
// Every write checks the data against the table schema (schema_evolution.h) and NOT NULL
// columns before any file is written, writes the data files (file_writer.h), then commits
// optimistically (commit.h). After a commit at a version that is a multiple of
// delta.checkpointInterval the writer writes a checkpoint (checkpoint_writer.h) and then runs
// log cleanup (log_cleanup.h, unless delta.enableExpiredLogCleanup=false); failures of these
// post-commit steps are logged, never reported as a failed write (the commit is durable). With
// TableWriterOptions::background_checkpoints they run on a thread the writer owns, after the
// commit has returned (post_commit.h states the contract); Checkpoint(), CleanupLogs() and the
// destructor wait for a running one.
//
// The writer caches the latest snapshot and refreshes it before each operation by probing for
// newer commit files (no directory listing), so a writer that is the only one on a table never
// re-reads the log. A new writer starts from the latest snapshot this process has seen of the
// table (snapshot_cache.h), so a writer per statement does not re-read the checkpoint either.
//
// Ownership: shares the FileSystem; the Engine must outlive the writer.
// Thread safety: all methods may be called from several threads (they are serialized). Several
// writers, in one or many processes, may write the same table concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/result.h"
#include "delta/checkpoint_writer.h"
#include "delta/commit.h"
#include "delta/file_writer.h"
#include "delta/log_cleanup.h"
#include "delta/post_commit.h"
#include "delta/schema_evolution.h"
#include "delta/snapshot.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::delta {

enum class SaveMode {
  kAppend,         // add the rows (creates the table when absent)
  kOverwrite,      // replace all rows: removes every live file (dataChange=true), adds the new ones
  kErrorIfExists,  // create the table with the rows; AlreadyExists when it exists
};

struct WriteOptions {
  SaveMode mode = SaveMode::kAppend;
  // Add data columns missing from the table schema (and new nested struct fields).
  bool merge_schema = false;
  // Partition columns of a new table; for an existing table, when non-empty, they must equal
  // the table's partition columns.
  std::vector<std::string> partition_by;
  // Table properties of a new table (ignored for an existing one).
  std::map<std::string, std::string> configuration;
  // Idempotency: when both are set, the write is skipped (nothing written, nothing committed)
  // if the table already records txn_app_id at a version >= txn_version; otherwise the commit
  // carries txn{appId, version, lastUpdated}.
  std::optional<std::string> txn_app_id;
  std::optional<int64_t> txn_version;
  // commitInfo.operation: "WRITE" by default; streaming sinks pass "STREAMING UPDATE" with
  // operation_parameters {"outputMode","queryId","epochId"}. Values are plain strings.
  std::string operation = "WRITE";
  std::map<std::string, std::string> operation_parameters;
  // Data file layout.
  int64_t max_rows_per_file = 0;  // 0 = one file per partition
};

struct WriteResult {
  std::optional<Version> version;  // nullopt when skipped
  bool skipped = false;            // the txn (appId, version) was already committed
  int64_t num_rows = 0;
  int64_t num_files = 0;
  int64_t num_bytes = 0;
  int64_t num_removed_files = 0;
  int attempts = 0;  // commit attempts (1 = no lost race)
};

struct CreateTableOptions {
  std::vector<std::string> partition_columns;
  std::map<std::string, std::string> configuration;
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::string operation = "CREATE TABLE";
  // Per-field metadata to store in the schema (e.g. {"comment": "..."} of a column COMMENT);
  // column mapping adds its keys beside these.
  FieldMetadata field_metadata;
};

// REPLACE TABLE / CREATE OR REPLACE TABLE [AS SELECT] of an existing table.
struct ReplaceTableOptions {
  std::vector<std::string> partition_columns;        // of the new schema
  std::map<std::string, std::string> configuration;  // the new table properties (replace the old)
  std::optional<std::string> name;
  std::optional<std::string> description;
  // commitInfo.operation, Spark's names: "CREATE OR REPLACE TABLE", "REPLACE TABLE",
  // "CREATE OR REPLACE TABLE AS SELECT", "REPLACE TABLE AS SELECT".
  std::string operation = "CREATE OR REPLACE TABLE";
  FieldMetadata field_metadata;  // as CreateTableOptions::field_metadata
};

struct TableWriterOptions {
  // commit.sync (default true) also governs data files: each data and cdc file is fsynced
  // before the commit that references it (DataFileOptions::sync). Tests turn both off together.
  CommitOptions commit;
  bool write_checkpoints = true;
  // Write checkpoints (and run log cleanup) on a background thread with its own connection, so
  // a commit does not wait for them (post_commit.h). Off: in the committing call.
  bool background_checkpoints = false;
  // Clock for commit-independent times (tombstone expiry, log retention). Null: system clock.
  std::function<int64_t()> now_ms;
  std::string compression = "snappy";
};

class DeltaTableWriter {
 public:
  // Opens a writer for the table at `path` (which need not exist yet).
  static Result<std::unique_ptr<DeltaTableWriter>> Open(std::shared_ptr<fs::FileSystem> fs,
                                                        engine::Engine* engine, std::string path,
                                                        TableWriterOptions options = {});

  const std::string& path() const { return path_; }

  // The latest snapshot, or nullptr when there is no table yet.
  Result<std::shared_ptr<const Snapshot>> Latest();

  // CREATE TABLE: commits version 0 with protocol, metaData and commitInfo. AlreadyExists when
  // the table exists. Protocol (1,2), or (1,4) when delta.enableChangeDataFeed=true.
  Result<Version> CreateTable(const engine::Schema& schema, const CreateTableOptions& options = {});

  // REPLACE TABLE (Delta's semantics): one commit on the existing table that replaces its
  // metaData (new schemaString, partitionColumns, configuration, createdTime; the table id is
  // kept, so readers and streams see the same table), removes every live file (dataChange=true)
  // and, when `data` is given (AS SELECT), adds its rows as new files. The protocol is never
  // downgraded; it is upgraded when the new properties need it (change data feed). Older
  // versions stay readable by time travel. NotFound when the table does not exist;
  // NotSupported when Sluice cannot write its protocol or the new schema/properties;
  // InvalidArgument when `data`'s columns are not `schema`; Conflict when a concurrent commit
  // changed the table (the replace read all of it).
  Result<WriteResult> ReplaceTable(const engine::Schema& schema, const engine::Batch* data,
                                   const ReplaceTableOptions& options);

  // Writes `data` per `options` (see WriteOptions).
  Result<WriteResult> Write(const engine::Batch& data, const WriteOptions& options = {});

  // ALTER TABLE ADD COLUMNS: a metadata-only commit (operation "ADD COLUMNS").
  Result<Version> AddColumns(const std::vector<engine::Field>& columns);
  // ALTER TABLE SET TBLPROPERTIES: a metadata-only commit (operation "SET TBLPROPERTIES");
  // enabling the change data feed upgrades the protocol to writer version 4 in the same commit.
  Result<Version> SetProperties(const std::map<std::string, std::string>& properties);
  // ALTER TABLE RENAME COLUMN / DROP COLUMN(S): metadata-only commits, which need column mapping
  // mode name or id (the files keep their physical names; NotSupported naming the property
  // otherwise). `path` names a column ("a") or a nested struct field ("s.x", with element /
  // key / value steps through lists and maps), case-insensitively. A partition column can be
  // renamed (metaData.partitionColumns follows), not dropped; at least one column must remain.
  Result<Version> RenameColumn(const std::vector<std::string>& path, const std::string& new_name);
  Result<Version> DropColumns(const std::vector<std::vector<std::string>>& paths);

  // For DML (UPDATE/DELETE/MERGE) built on top: a transaction reading the latest snapshot.
  // NotFound when the table does not exist.
  Result<std::unique_ptr<Transaction>> StartTransaction();
  // Writes data files for `data`, checked against and cast to the table schema of `txn`'s
  // snapshot (as Write does, without mergeSchema), and records them in `txn` as written by it
  // (Transaction::RecordWrittenFile). The caller adds the returned actions.
  Result<std::vector<AddFile>> WriteFiles(Transaction* txn, const engine::Batch& data);
  // Commits `txn` and runs the post-commit steps (checkpoint, cleanup). On Conflict, only the
  // files `txn` itself wrote (Transaction::written_files) are deleted: never committed, they
  // are garbage. Files that `txn` re-adds (RESTORE) or that other commits reference are never
  // deleted.
  Result<CommitResult> Commit(Transaction* txn);

  // True when data files are fsynced before commits (TableWriterOptions::commit.sync).
  bool sync_data_files() const { return options_.commit.sync; }

  // Writes a checkpoint of the latest snapshot now.
  Result<CheckpointInfo> Checkpoint();
  // Runs log cleanup now with the table's delta.logRetentionDuration.
  Result<CleanupResult> CleanupLogs();

 private:
  DeltaTableWriter(std::shared_ptr<fs::FileSystem> fs, std::unique_ptr<engine::Connection> conn,
                   std::string path, TableWriterOptions options);
  Result<std::shared_ptr<const Snapshot>> RefreshLocked();
  Result<CommitResult> CommitLocked(Transaction* txn);
  void PostCommitLocked(const CommitResult& result);
  int64_t Now() const;
  Result<WriteResult> WriteLocked(const engine::Batch& data, const WriteOptions& options);
  // NOT NULL checks and the cast/reorder of `data` to `plan.table_schema`.
  Result<engine::Batch> ConformLocked(const engine::Batch& data, const WriteSchemaPlan& plan);

  std::shared_ptr<fs::FileSystem> fs_;
  std::unique_ptr<engine::Connection> conn_;
  std::string path_;
  TableWriterOptions options_;
  std::mutex mu_;
  std::shared_ptr<const Snapshot> latest_;  // guarded by mu_; null until a table exists
  // Set with options_.background_checkpoints; declared last so it is destroyed (drained) first.
  std::unique_ptr<BackgroundPostCommit> background_;
};

// The protocol a new table with `configuration` needs: (1,2), or (1,4) with the change data feed,
// (2,5) with column mapping (mode name or id).
Protocol ProtocolForNewTable(const std::map<std::string, std::string>& configuration);

// OK when Sluice can write a table with this protocol and metadata: writer version <= 5 without
// CHECK constraints, generated or identity columns, or column invariants (which Sluice does not
// enforce), or writer 7 whose features are all in {appendOnly, invariants, changeDataFeed,
// columnMapping} under the same conditions; column mapping in mode none, name or id (files under
// physical names with Parquet field ids). NotSupported naming the version or feature otherwise.
Status CheckWriteSupported(const Protocol& protocol, const Metadata& metadata);

}  // namespace sluice::delta
