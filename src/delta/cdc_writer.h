// Writing change data feed files (PROTOCOL.md "Change Data Files"): Parquet files under
// `<table>/_change_data/` with the table's data columns plus `_change_type` (insert,
// update_preimage, update_postimage, delete), partitioned like the table (partition columns are
// not stored in the files; their values are in the cdc action), and one `cdc` action per file
// with dataChange=false. The reader (changes.h) reads only these files for a commit that has
// any, so a DML commit that writes cdc files must describe all its row changes in them.
//
// Thread safety: as the Connection (one thread).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "delta/actions.h"
#include "delta/snapshot.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::delta {

inline constexpr char kChangeDataDir[] = "_change_data";

// True when DML commits on `snapshot` must write cdc files (delta.enableChangeDataFeed=true).
bool ChangeDataFeedEnabled(const Snapshot& snapshot);

// Writes `changes` (the table columns of `snapshot` in schema order, then `_change_type`) as
// cdc files and returns their actions (paths relative to the table root, "_change_data/...").
// No rows: no files. With `sync` each file is fsynced before it is published
// (DataFileOptions::sync; pass DeltaTableWriter::sync_data_files()).
Result<std::vector<AddCdcFile>> WriteCdcFiles(engine::Connection* conn, fs::FileSystem* fs,
                                              const Snapshot& snapshot,
                                              const engine::Batch& changes, bool sync = true);

}  // namespace sluice::delta
