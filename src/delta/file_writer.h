// Writing a batch as Delta data files: Parquet files through the engine plus one add action per
// file (path, partitionValues, size, modificationTime, dataChange, stats).
//
// Unpartitioned data becomes one file at the table root; partitioned data one file per distinct
// partition tuple, in Hive-style directories (write_util.h). Partition columns are not stored in
// the files. Each file is written by the engine directly under its final name, a fresh
// "part-<index>-<uuid>..." that no commit names yet, so a failed or crashed write leaves at most
// an unreferenced file that readers never see (VACUUM removes it) and data files are never
// overwritten. With DataFileOptions::sync (the default) each file is fsynced and then its
// directory (FileSystem::SyncFile, SyncDirectory), so data is durable before any commit names
// it; on ext4 the file's fsync commits its directory entry in the same journal transaction, and
// the directory fsync finds nothing left to do. DataFileOptions::background_sync moves those
// fsyncs to a background thread (DataFileSync) that the caller waits for before it publishes
// the commit. Size and modification time come from FileSystem::Stat of the final file.
// On error, files this call already wrote are deleted (best effort); they were never committed.
//
// Ownership: borrows `conn` and `fs` for the call. Thread safety: as the Connection (one thread).
#pragma once

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "delta/actions.h"
#include "engine/engine.h"
#include "engine/parquet_field_ids.h"
#include "fs/file_system.h"

namespace sluice::delta {

// The fsyncs of the data files one WriteDataFiles call wrote, running on a background thread:
// each file, then each distinct directory of them. Wait() must have returned OK before a commit
// that names the files is published. The destructor waits too (never leaves a thread behind).
// Thread safety: one owner thread.
class DataFileSync {
 public:
  DataFileSync() = default;  // nothing pending: Wait() returns OK
  DataFileSync(DataFileSync&&) = default;
  DataFileSync& operator=(DataFileSync&& other);
  ~DataFileSync();

  // Starts syncing `files` (storage paths) on `fs`, which must outlive the sync.
  static DataFileSync Start(fs::FileSystem* fs, std::vector<std::string> files);
  // Blocks until every file and directory is synced; the first error, naming the path.
  // Idempotent: later calls return the same Status.
  Status Wait();

 private:
  std::future<Status> pending_;
  std::optional<Status> result_;
};

struct DataFileOptions {
  std::string compression = "snappy";
  // delta.dataSkippingNumIndexedCols: leaf columns with stats (-1 = all).
  int num_indexed_cols = 32;
  bool data_change = true;
  // Largest number of rows per file; 0 = no limit (one file per partition).
  int64_t max_rows_per_file = 0;
  int64_t row_group_size = 122880;
  // fsync each file (FileSystem::SyncFile) before it is renamed to its final name, so that a
  // commit referencing it never outlives its data in a crash. Tests and benchmarks may turn it
  // off (the writer ties it to CommitOptions::sync).
  bool sync = true;
  // With sync: when non-null, the fsyncs are not done inline but started on a background thread
  // whose handle is stored here when the call succeeds; the caller must Wait() on it before the
  // commit naming the files is published (Transaction::SetBeforePublish).
  DataFileSync* background_sync = nullptr;
  // Parquet field ids of the table's columns (column mapping, column_mapping_write.h), by the
  // names the files hold; each file gets those of its own columns (partition columns are not
  // stored). Empty: no field ids.
  std::vector<engine::ParquetFieldId> field_ids;
};

// Writes `data` — whose columns are exactly `table_schema` (same names, order and types) —
// under `table_root`. `partition_columns` are columns of `table_schema` (exact spelling).
// Returns the add actions (empty for no rows). Partitioned writes register `data` on `conn`
// under a temporary name for the duration of the call.
Result<std::vector<AddFile>> WriteDataFiles(engine::Connection* conn, fs::FileSystem* fs,
                                            const std::string& table_root,
                                            const engine::Batch& data,
                                            const engine::Schema& table_schema,
                                            const std::vector<std::string>& partition_columns,
                                            const DataFileOptions& options);

// Writes `batch` (columns exactly `file_schema`, no partition columns) as one data file at
// `<table_root>/<relative_dir>/part-...parquet` and returns its add action with
// `partition_values`. Used by WriteDataFiles. Syncs the file and its directory when
// options.sync and not options.background_sync (WriteDataFiles then syncs them itself).
Result<AddFile> WriteOneDataFile(engine::Connection* conn, fs::FileSystem* fs,
                                 const std::string& table_root, const std::string& relative_dir,
                                 int file_index, const engine::Batch& batch,
                                 const engine::Schema& file_schema,
                                 const PartitionValues& partition_values,
                                 const DataFileOptions& options);

}  // namespace sluice::delta
