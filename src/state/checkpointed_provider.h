// CheckpointedProvider: the StateStoreProvider of both kinds (RocksDB, in-memory). It owns the
// versioning, the changelog/snapshot files in the checkpoint, recovery and maintenance; the
// working copy of the state lives in a KvBackend. docs/state.md describes the rules implemented
// here; internal to src/state (use StateStoreProvider::Open).
//
// Thread safety: one thread at a time (provider and its store together).
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fs/file_system.h"
#include "state/kv_backend.h"
#include "state/state_file_format.h"
#include "state/state_store.h"

namespace sluice::state {

class CheckpointedStore;

// Maintenance deletes temporary files (".<name>.<unique>.tmp") older than this.
inline constexpr int64_t kTempFileMinAgeMs = 60 * 60 * 1000;

class CheckpointedProvider final : public StateStoreProvider {
 public:
  // `backend` is empty (version 0).
  CheckpointedProvider(StateStoreId id, StateStoreOptions options,
                       std::unique_ptr<KvBackend> backend);
  ~CheckpointedProvider() override;

  const StateStoreId& id() const override { return id_; }
  Result<std::unique_ptr<StateStore>> GetStore(int64_t version) override;
  Result<int64_t> LatestVersion() override;
  Status Maintenance() override;
  StateStoreMetrics LastMetrics() const override { return last_metrics_; }

 private:
  friend class CheckpointedStore;

  // Lists the checkpoint directory into changelogs_/snapshots_ (always when `refresh`).
  Status EnsureListed(bool refresh);
  // Makes the backend hold exactly `version`, from the checkpoint files.
  Status Rebuild(int64_t version);
  // Empties the backend unless it is known to be empty.
  Status ClearBackend();
  Status LoadFile(StateFileKind kind, int64_t version, int64_t* num_keys_after);
  // The latest snapshot version <= version, 0 when none.
  int64_t LatestSnapshotAtOrBelow(int64_t version) const;
  int64_t CurrentNumKeys();

  // Called by the store.
  Result<int64_t> CommitStore(CheckpointedStore* store);
  void CloseStore(CheckpointedStore* store, bool discard_changes);
  // The snapshot of `version` from the working copy, or from a detached store's caller.
  Status WriteSnapshot(int64_t version, int64_t* bytes);
  Status WriteSnapshotFrom(int64_t version, const StateContentsSource& contents, int64_t* bytes);
  Status PublishSnapshot(int64_t version, const std::string& file_bytes, int64_t* bytes);
  std::string PathFor(StateFileKind kind, int64_t version) const;
  void FillMetrics(const CheckpointedStore& store, StateStoreMetrics* m);

  const StateStoreId id_;
  const StateStoreOptions options_;
  const std::shared_ptr<fs::FileSystem> fs_;
  const std::string dir_;
  std::unique_ptr<KvBackend> backend_;

  bool backend_valid_ = true;  // backend_ holds exactly working_version_
  int64_t working_version_ = 0;
  // backend_ is behind working_version_, which this provider committed from a detached store
  // (StateStore::DetachWorkingCopy): a store of that version loads the working copy from the
  // checkpoint on its first read only.
  bool working_copy_lags_ = false;
  int64_t num_keys_ = 0;       // exact key count when options_.track_num_keys
  bool backend_empty_ = true;  // backend_ certainly holds no key (fresh or just cleared)
  bool store_open_ = false;
  int open_iterators_ = 0;

  bool listed_ = false;
  std::set<int64_t> changelogs_;  // versions whose changelog exists (or may exist)
  std::set<int64_t> snapshots_;   // versions whose snapshot exists (or may exist)
  std::vector<std::pair<std::string, int64_t>> temp_files_;  // (path, mtime_ms) from the listing

  // Figures of the last load and commit.
  int64_t load_time_ms_ = 0;
  int64_t loaded_from_snapshot_ = 0;
  int64_t changelogs_replayed_ = 0;
  int64_t commit_time_ms_ = 0;
  int64_t changelog_bytes_ = 0;
  int64_t snapshot_bytes_ = 0;
  int64_t snapshot_failures_ = 0;
  StateStoreMetrics last_metrics_;
};

}  // namespace sluice::state
