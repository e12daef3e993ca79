#include "delta/table.h"

#include <utility>

#include "delta/changes.h"
#include "delta/scan.h"
#include "delta/snapshot_cache.h"

namespace sluice::delta {

DeltaTable::DeltaTable(std::shared_ptr<fs::FileSystem> fs, std::unique_ptr<engine::Connection> conn,
                       std::string path)
    : fs_(std::move(fs)), conn_(std::move(conn)), path_(std::move(path)) {}

Result<std::unique_ptr<DeltaTable>> DeltaTable::Open(std::shared_ptr<fs::FileSystem> fs,
                                                     engine::Engine* engine, std::string path) {
  if (fs == nullptr || engine == nullptr)
    return Status::InvalidArgument("DeltaTable::Open needs a file system and an engine");
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  SLUICE_ASSIGN_OR_RETURN_CTX(auto conn, engine->Connect(), "opening Delta table " + path);
  std::unique_ptr<DeltaTable> table(
      new DeltaTable(std::move(fs), std::move(conn), std::move(path)));
  // Start from the latest snapshot seen of this table in the process (snapshot_cache.h): only
  // the commits after it are read.
  table->latest_ = LookupCachedSnapshot(table->fs_, table->path_);
  SLUICE_RETURN_NOT_OK(table->Latest());
  return table;
}

Result<LogListing> DeltaTable::ListLocked() { return ListLog(fs_.get(), path_); }

Result<std::shared_ptr<const Snapshot>> DeltaTable::LatestLocked() {
  std::optional<Version> known;
  if (latest_) known = latest_->version;
  SLUICE_ASSIGN_OR_RETURN(LogListing listing, ListLogForLatest(fs_.get(), path_, known));
  auto latest = listing.LatestVersion();
  if (latest_ && latest && *latest == latest_->version) return latest_;
  std::shared_ptr<const Snapshot> snap;
  if (latest_ && latest && *latest > latest_->version) {
    // Incremental: apply only the new commits to the cached snapshot.
    auto updated = UpdateSnapshot(fs_.get(), listing, *latest_, *latest);
    if (updated.ok()) snap = *updated;
    // A missing commit (e.g. cleaned up behind a newer checkpoint) falls back to a full load.
    else if (!updated.status().IsCorruption())
      return updated.status();
  }
  if (!snap) {
    // A listing that starts at the cached version has no checkpoint to load from.
    if (listing.listed_from && known) {
      SLUICE_ASSIGN_OR_RETURN(listing, ListLocked());
      latest = listing.LatestVersion();
    }
    SLUICE_ASSIGN_OR_RETURN(snap, SnapshotAtLocked(listing, latest.value_or(Version(0))));
  }
  latest_ = snap;
  CacheSnapshot(fs_, snap);
  return snap;
}

Result<std::shared_ptr<const Snapshot>> DeltaTable::SnapshotAtLocked(const LogListing& listing,
                                                                     Version version) {
  SLUICE_ASSIGN_OR_RETURN_CTX(LogSegment segment, BuildLogSegment(listing, version), path_);
  return LoadSnapshot(fs_.get(), conn_.get(), listing, segment);
}

Result<std::shared_ptr<const Snapshot>> DeltaTable::Latest() {
  std::lock_guard<std::mutex> lock(mu_);
  return LatestLocked();
}

Result<std::shared_ptr<const Snapshot>> DeltaTable::SnapshotAt(Version version) {
  std::lock_guard<std::mutex> lock(mu_);
  SLUICE_ASSIGN_OR_RETURN(LogListing listing, ListLocked());
  // The cached latest snapshot serves its own version (versions are immutable).
  if (latest_ && latest_->version == version && listing.LatestVersion() &&
      *listing.LatestVersion() >= version) {
    return latest_;
  }
  return SnapshotAtLocked(listing, version);
}

Result<Version> DeltaTable::VersionAtTimestamp(int64_t timestamp_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  SLUICE_ASSIGN_OR_RETURN(auto latest, LatestLocked());
  SLUICE_ASSIGN_OR_RETURN(LogListing listing, ListLocked());
  SLUICE_ASSIGN_OR_RETURN(auto commits,
                          ListCommitTimestamps(fs_.get(), listing, &latest->metadata));
  return delta::VersionAtTimestamp(commits, timestamp_ms).WithContext(path_);
}

Result<std::shared_ptr<const Snapshot>> DeltaTable::SnapshotAtTimestamp(int64_t timestamp_ms) {
  SLUICE_ASSIGN_OR_RETURN(Version v, VersionAtTimestamp(timestamp_ms));
  return SnapshotAt(v);
}

Result<engine::Batch> DeltaTable::Scan(const Snapshot& snapshot, const ScanFilter& filter,
                                       std::vector<AddFile>* files_read) {
  std::lock_guard<std::mutex> lock(mu_);
  return ScanSnapshot(conn_.get(), fs_.get(), snapshot, filter, files_read);
}

Result<std::string> DeltaTable::ScanSql(const Snapshot& snapshot) {
  std::lock_guard<std::mutex> lock(mu_);
  return ScanSnapshotSql(conn_.get(), fs_.get(), snapshot);
}

Result<std::optional<int64_t>> DeltaTable::LatestTxnVersion(const std::string& app_id) {
  std::lock_guard<std::mutex> lock(mu_);
  SLUICE_ASSIGN_OR_RETURN(auto snap, LatestLocked());
  return snap->TxnVersion(app_id);
}

Result<std::vector<HistoryEntry>> DeltaTable::History(std::optional<size_t> limit) {
  std::lock_guard<std::mutex> lock(mu_);
  SLUICE_ASSIGN_OR_RETURN(auto latest, LatestLocked());
  SLUICE_ASSIGN_OR_RETURN(LogListing listing, ListLocked());
  SLUICE_ASSIGN_OR_RETURN(auto commits,
                          ListCommitTimestamps(fs_.get(), listing, &latest->metadata));
  std::vector<HistoryEntry> out;
  for (auto it = commits.rbegin(); it != commits.rend(); ++it) {
    if (limit && out.size() >= *limit) break;
    auto c = listing.commits.find(it->version);
    if (c == listing.commits.end()) continue;  // only a checkpoint remains
    HistoryEntry e{it->version, it->timestamp_ms, std::nullopt};
    SLUICE_ASSIGN_OR_RETURN(auto actions, ReadCommitActions(fs_.get(), c->second.info.path));
    for (const Action& a : actions) {
      if (const auto* ci = std::get_if<CommitInfo>(&a)) e.commit_info = *ci;
    }
    out.push_back(std::move(e));
  }
  return out;
}

Result<engine::Batch> DeltaTable::Changes(Version start, std::optional<Version> end,
                                          ChangesSchema schema) {
  std::lock_guard<std::mutex> lock(mu_);
  SLUICE_ASSIGN_OR_RETURN(LogListing listing, ListLocked());
  return ReadChanges(fs_.get(), conn_.get(), listing, start, end, schema);
}

Result<engine::Batch> DeltaTable::ChangesBetweenTimestamps(int64_t start_ms,
                                                           std::optional<int64_t> end_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  SLUICE_ASSIGN_OR_RETURN(auto latest, LatestLocked());
  SLUICE_ASSIGN_OR_RETURN(LogListing listing, ListLocked());
  SLUICE_ASSIGN_OR_RETURN(auto commits,
                          ListCommitTimestamps(fs_.get(), listing, &latest->metadata));
  SLUICE_ASSIGN_OR_RETURN_CTX(auto range, VersionRangeForTimestamps(commits, start_ms, end_ms),
                              path_);
  return ReadChanges(fs_.get(), conn_.get(), listing, range.first, range.second);
}

Result<std::vector<CommitTimestamp>> DeltaTable::CommitTimestamps() {
  std::lock_guard<std::mutex> lock(mu_);
  SLUICE_ASSIGN_OR_RETURN(auto latest, LatestLocked());
  SLUICE_ASSIGN_OR_RETURN(LogListing listing, ListLocked());
  return ListCommitTimestamps(fs_.get(), listing, &latest->metadata);
}

}  // namespace sluice::delta
