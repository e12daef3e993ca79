// Writing a batch as Delta data files: Parquet files through the engine plus one add action per
// file (path, partitionValues, size, modificationTime, dataChange, stats).
//
// Unpartitioned data becomes one file at the table root; partitioned data one file per distinct
// partition tuple, in Hive-style directories (write_util.h). Partition columns are not stored in
// the files. Each file is written by the engine under a hidden temporary name in its directory
// (".part-....tmp") and then moved to its final name with FileSystem::RenameNoReplace, so a
// failed or crashed write never leaves a half file under a data file name, and data files are
// never overwritten. With DataFileOptions::sync (the default) the file is fsynced before the
// rename, and the rename syncs the directory, so data is durable before any commit names it.
// Size and modification time come from FileSystem::Stat of the final file.
// On error, files this call already wrote are deleted (best effort); they were never committed.
//
// Ownership: borrows `conn` and `fs` for the call. Thread safety: as the Connection (one thread).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "delta/actions.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::delta {

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
// `partition_values`. Used by WriteDataFiles.
Result<AddFile> WriteOneDataFile(engine::Connection* conn, fs::FileSystem* fs,
                                 const std::string& table_root, const std::string& relative_dir,
                                 int file_index, const engine::Batch& batch,
                                 const engine::Schema& file_schema,
                                 const PartitionValues& partition_values,
                                 const DataFileOptions& options);

}  // namespace sluice::delta
