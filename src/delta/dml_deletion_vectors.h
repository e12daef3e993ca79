// DELETE, UPDATE and MERGE with deletion vectors (docs/delta-dml.md, "Deletion vectors"): instead
// of rewriting a file to drop some of its rows, the operation marks them in the file's DV.
//
// Used when the table has the deletionVectors writer feature and delta.enableDeletionVectors is
// true (Delta's rule). The operation finds the rows it deletes or replaces as (log path, row
// index) pairs (CandidateReadSql with the row index column: the index counts every row of the
// file, DV-deleted ones included, as DVs do), then MarkDeletedRows, for each file with such rows:
// new DV = its old DV (if any) + the new rows; all the new DVs of the operation go into one DV
// file (deletion_vector_writer.h, recorded as written by the transaction, so a lost race deletes
// it). The commit gets a `remove` of the old entry (with its old DV, stats, dataChange=true) and
// an `add` of the same path with the new DV (size, modificationTime, partition values, tags and
// row tracking fields kept; stats kept with `tightBounds` false, as Delta writes them). A file
// whose every row (its stats' numRecords) is now deleted is removed whole instead, as Delta does.
//
// Crash point (FileSystem::MaybeCrash): "delta.after_deletion_vector_write", after the DV file is
// durable and before the commit (a crash there leaves an unreferenced DV file for VACUUM).
//
// Thread safety: as DmlTable (one thread at a time).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "delta/commit.h"
#include "delta/dml_util.h"
#include "delta/roaring.h"
#include "delta/snapshot.h"

namespace sluice::delta {

// Whether DML on the table at `snapshot` writes deletion vectors.
bool WritesDeletionVectors(const Snapshot& snapshot);

// Row indexes per log path from the rows of `sql` (a query with exactly two columns: the log path
// and the row index, in any order of rows).
Result<std::map<std::string, RowIndexSet>> QueryRowIndexes(engine::Connection* conn,
                                                           const std::string& sql,
                                                           const std::string& ctx);

struct DeletionVectorChanges {
  int64_t rows_deleted = 0;   // rows newly marked (or removed with their file)
  int64_t dvs_added = 0;      // files that got a new DV (numDeletionVectorsAdded)
  int64_t dvs_updated = 0;    // of those, files that had one (numDeletionVectorsUpdated)
  int64_t dvs_removed = 0;    // old DVs no longer in force (numDeletionVectorsRemoved)
  int64_t files_removed = 0;  // files removed whole (every row deleted)
  int64_t bytes_removed = 0;  // their size
  std::vector<std::string> removed_files;  // log paths of the files removed whole
};

// Marks `deleted` (log path -> row indexes newly deleted in that file) in the DVs of `files` (the
// live entries of those paths; a path of `deleted` not among them is Internal) and adds the
// removes and adds described above to `txn`. Writes the DV file (fsynced when the writer syncs
// data files) unless no file keeps a DV.
Result<DeletionVectorChanges> MarkDeletedRows(const DmlTable& table, Transaction* txn,
                                              const Snapshot& snapshot,
                                              const std::vector<AddFile>& files,
                                              const std::map<std::string, RowIndexSet>& deleted,
                                              int64_t now_ms);

}  // namespace sluice::delta
