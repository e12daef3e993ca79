// OPTIMIZE t [WHERE partition_predicate]: bin-packing compaction (Delta's OptimizeExecutor).
//
// Per partition, the live files smaller than `min_file_size` (default `target_file_size`), and the
// files of any size whose
// deletion vector deletes at least `max_deleted_rows_ratio` of their rows (Delta's
// spark.databricks.delta.optimize.maxDeletedRowsRatio, 0.05; numRecords from the file's stats;
// Spark 4.2 / Delta 4.4 picked a file at exactly 5 % and left one at 4 %) (optionally only in
// partitions where the predicate holds) are sorted by size and packed greedily into bins of at most
// `target_file_size` bytes (a file that does not fit starts a new bin); bins with a single file
// are left alone. Each bin's rows are read (partition values from the log) and written as one
// new file. The commit (operation "OPTIMIZE") removes the bins' files and adds the new ones,
// both with dataChange=false, so streaming readers and the change data feed skip it and the
// rows are unchanged. Nothing to compact: no commit.
// operationParameters {predicate, zOrderBy: "[]"}; operationMetrics numAddedFiles,
// numRemovedFiles, numAddedBytes, numRemovedBytes, numBatches, totalConsideredFiles,
// totalFilesSkipped, minFileSize, maxFileSize (of the added files).
// REORG TABLE t [WHERE partition_predicate] APPLY (PURGE) (`purge`, Delta's DeltaPurgeOperation):
// the files to rewrite are those whose deletion vector deletes rows (whatever their size), packed
// per partition as above, and a bin of a single file is rewritten too, so that every DV of the
// selected partitions is dropped with its rows. The commit's operation is "REORG" with
// operationParameters {predicate, applyPurge: true}; dataChange=false as OPTIMIZE; operationMetrics
// as Spark writes them for REORG: numAddedFiles, numRemovedFiles, numAddedBytes, numRemovedBytes,
// numDeletionVectorsRemoved, minFileSize, p25FileSize, p50FileSize, p75FileSize, maxFileSize.
// Both commits have isolationLevel SnapshotIsolation (no data change), as Spark's.
// Errors: InvalidArgument when the predicate references a non-partition column (Spark's
// "Predicate references non-partition column"). Conflicts: a concurrent remove of a compacted
// file fails the commit (files are recorded as read); concurrent appends do not conflict.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "delta/dml_util.h"

namespace sluice::delta {

struct OptimizeOptions {
  std::optional<std::string> partition_predicate;  // SQL over partition columns
  int64_t target_file_size = 128LL * 1024 * 1024;  // bytes (Spark's maxFileSize)
  std::optional<int64_t> min_file_size;  // small files (Spark's minFileSize); unset: the target
  bool purge = false;  // REORG TABLE ... APPLY (PURGE): rewrite the files with DVs
  double max_deleted_rows_ratio = 0.05;  // plain OPTIMIZE: files with this share deleted too
};

Result<DmlResult> Optimize(const DmlTable& table, const OptimizeOptions& optimize = {},
                           const DmlOptions& options = {});

}  // namespace sluice::delta
