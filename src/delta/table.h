// DeltaTable: the reading facade of a Delta table for upper layers (sources, SQL, API).
//
//   SLUICE_ASSIGN_OR_RETURN(auto table, delta::DeltaTable::Open(fs, engine, "/warehouse/t"));
//   SLUICE_ASSIGN_OR_RETURN(auto snap, table->Latest());
//   SLUICE_ASSIGN_OR_RETURN(engine::Batch rows, table->Scan(*snap, filter));
//
// Snapshots are immutable and shared. The table caches its latest snapshot: Latest() re-lists
// _delta_log and, when new commits appeared, applies only those commits to the cached state;
// a first open reads only the newest checkpoint plus the commits after it, or, when this
// process has seen the table before (snapshot_cache.h), only the commits after that snapshot.
//
// Ownership: the FileSystem is shared; the Engine must outlive the table.
// Thread safety: all methods may be called from several threads (they are serialized).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/result.h"
#include "delta/actions.h"
#include "delta/changes.h"
#include "delta/data_skipping.h"
#include "delta/log_segment.h"
#include "delta/snapshot.h"
#include "delta/time_travel.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::delta {

struct HistoryEntry {
  Version version;
  int64_t timestamp_ms = 0;               // commit timestamp (time_travel.h rules)
  std::optional<CommitInfo> commit_info;  // nullopt when the commit has none
};

class DeltaTable {
 public:
  // Opens the table at `path` and loads its latest snapshot. NotFound when `path` holds no
  // Delta log; NotSupported when its protocol is not readable; Corruption for a broken log.
  static Result<std::unique_ptr<DeltaTable>> Open(std::shared_ptr<fs::FileSystem> fs,
                                                  engine::Engine* engine, std::string path);

  const std::string& path() const { return path_; }

  // The latest snapshot (refreshes from storage; reuses the cache when nothing changed).
  Result<std::shared_ptr<const Snapshot>> Latest();
  // VERSION AS OF `version`. NotFound ("Cannot time travel Delta table to version ...") when it
  // is beyond the latest version or its log was cleaned up.
  Result<std::shared_ptr<const Snapshot>> SnapshotAt(Version version);
  // TIMESTAMP AS OF `timestamp_ms` (epoch ms), per time_travel.h.
  Result<std::shared_ptr<const Snapshot>> SnapshotAtTimestamp(int64_t timestamp_ms);
  // The version TIMESTAMP AS OF `timestamp_ms` resolves to.
  Result<Version> VersionAtTimestamp(int64_t timestamp_ms);

  // Rows of `snapshot` matching `filter`, table columns in schema order. `files_read`
  // (optional) receives the files left after data skipping.
  Result<engine::Batch> Scan(const Snapshot& snapshot, const ScanFilter& filter = {},
                             std::vector<AddFile>* files_read = nullptr);

  // The SQL (a SELECT) reading `snapshot`'s rows, for use inside larger queries on an engine
  // connection of the same Engine (the files are read when that query runs).
  Result<std::string> ScanSql(const Snapshot& snapshot);

  // Latest txn version recorded for `app_id` in the latest snapshot, or nullopt.
  Result<std::optional<int64_t>> LatestTxnVersion(const std::string& app_id);

  // Commits newest first (at most `limit` when given), with their commitInfo.
  Result<std::vector<HistoryEntry>> History(std::optional<size_t> limit = std::nullopt);

  // Change data feed rows of versions [start, end] (end defaults to latest), with the latest
  // schema's columns unless `schema` says the end version's; see changes.h.
  Result<engine::Batch> Changes(Version start, std::optional<Version> end = std::nullopt,
                                ChangesSchema schema = ChangesSchema::kLatest);

  // Change data feed rows between commit timestamps (epoch ms), per
  // VersionRangeForTimestamps.
  Result<engine::Batch> ChangesBetweenTimestamps(int64_t start_ms,
                                                 std::optional<int64_t> end_ms = std::nullopt);

  // Monotonized commit timestamps of all recreatable versions.
  Result<std::vector<CommitTimestamp>> CommitTimestamps();

 private:
  DeltaTable(std::shared_ptr<fs::FileSystem> fs, std::unique_ptr<engine::Connection> conn,
             std::string path);
  Result<LogListing> ListLocked();
  Result<std::shared_ptr<const Snapshot>> LatestLocked();
  Result<std::shared_ptr<const Snapshot>> SnapshotAtLocked(const LogListing& listing,
                                                           Version version);

  std::shared_ptr<fs::FileSystem> fs_;
  std::unique_ptr<engine::Connection> conn_;
  std::string path_;
  std::mutex mu_;
  std::shared_ptr<const Snapshot> latest_;  // cache, guarded by mu_
};

}  // namespace sluice::delta
