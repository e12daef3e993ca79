#include "state/checkpointed_provider.h"

#include <chrono>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "common/check.h"
#include "common/clock.h"
#include "common/logging.h"

namespace sluice::state {
namespace {

int64_t ElapsedMs(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

// Keeps the provider's count of open iterators; Commit refuses while any is open. `on_key`
// (optional) is told each key the caller asks for, so that the store knows it is present.
class CountedIterator final : public StateIterator {
 public:
  CountedIterator(std::unique_ptr<StateIterator> inner, int* counter,
                  std::function<void(std::string_view)> on_key)
      : inner_(std::move(inner)), counter_(counter), on_key_(std::move(on_key)) {
    ++*counter_;
  }
  ~CountedIterator() override { --*counter_; }
  bool Valid() const override { return inner_->Valid(); }
  std::string_view key() const override {
    std::string_view k = inner_->key();
    if (on_key_ && !reported_) {
      on_key_(k);
      reported_ = true;  // once per position: key() is often called several times
    }
    return k;
  }
  std::string_view value() const override { return inner_->value(); }
  void Next() override {
    reported_ = false;
    inner_->Next();
  }
  void Seek(std::string_view target) override {
    reported_ = false;
    inner_->Seek(target);
  }
  Status status() const override { return inner_->status(); }

 private:
  std::unique_ptr<StateIterator> inner_;
  int* counter_;
  std::function<void(std::string_view)> on_key_;
  mutable bool reported_ = false;  // on_key_ was told the current key
};

}  // namespace

// ----------------------------------------------------------------------------------------------
// The store of one batch.

class CheckpointedStore final : public StateStore {
 public:
  // `load_pending`: the provider's working copy lags behind `version` (see working_copy_lags_)
  // and is loaded by the first operation that needs it.
  CheckpointedStore(CheckpointedProvider* provider, int64_t version, bool load_pending)
      : provider_(provider),
        version_(version),
        load_pending_(load_pending),
        changelog_(StateFileKind::kChangelog, version + 1) {}
  ~CheckpointedStore() override { Abort(); }

  const StateStoreId& id() const override { return provider_->id_; }
  int64_t version() const override { return version_; }

  Result<std::optional<std::string>> Get(std::string_view key) override {
    SLUICE_RETURN_NOT_OK(CheckReadable("Get"));
    auto got = provider_->backend_->Get(key);
    if (got.ok() && provider_->options_.track_num_keys) {
      // Read-modify-write (Get, later Put of the same key) is the common pattern: remember
      // whether the key exists so that the Put need not read it again to count keys.
      RememberRead(key, got->has_value());
    }
    return got;
  }

  Result<std::vector<std::optional<std::string>>> MultiGet(
      const std::vector<std::string_view>& keys) override {
    SLUICE_RETURN_NOT_OK(CheckReadable("MultiGet"));
    auto got = provider_->backend_->MultiGet(keys);
    if (got.ok() && provider_->options_.track_num_keys) {
      for (size_t i = 0; i < keys.size(); ++i) RememberRead(keys[i], (*got)[i].has_value());
    }
    return got;
  }

  Status Put(std::string_view key, std::string_view value) override {
    SLUICE_RETURN_NOT_OK(CheckOpen("Put"));
    if (detached_) {
      changelog_.Put(key, value);
      ++num_updated_;
      return Status::OK();
    }
    SLUICE_RETURN_NOT_OK(EnsureLoaded());
    dirty_ = true;
    provider_->backend_empty_ = false;
    if (provider_->options_.track_num_keys) {
      SLUICE_ASSIGN_OR_RETURN(bool existed, ExistsAndRemember(key, true));
      if (!existed) ++provider_->num_keys_;
    }
    SLUICE_RETURN_NOT_OK(provider_->backend_->Put(key, value));
    changelog_.Put(key, value);
    ++num_updated_;
    return Status::OK();
  }

  Status Remove(std::string_view key) override {
    SLUICE_RETURN_NOT_OK(CheckOpen("Remove"));
    if (detached_) {
      changelog_.Delete(key);
      ++num_removed_;
      return Status::OK();
    }
    SLUICE_RETURN_NOT_OK(EnsureLoaded());
    if (provider_->options_.track_num_keys) {
      SLUICE_ASSIGN_OR_RETURN(bool existed, ExistsAndRemember(key, false));
      if (!existed) return Status::OK();  // nothing to remove, nothing to log
      --provider_->num_keys_;
    }
    dirty_ = true;
    provider_->backend_empty_ = false;
    SLUICE_RETURN_NOT_OK(provider_->backend_->Delete(key));
    changelog_.Delete(key);
    ++num_removed_;
    return Status::OK();
  }

  Status DetachWorkingCopy(StateContentsSource contents) override {
    SLUICE_RETURN_NOT_OK(CheckOpen("DetachWorkingCopy"));
    if (!contents) {
      return Status::InvalidArgument("DetachWorkingCopy on the state store of " +
                                     provider_->id_.ToString() + " without a contents source");
    }
    if (provider_->options_.track_num_keys) {
      return Status::InvalidArgument("DetachWorkingCopy on the state store of " +
                                     provider_->id_.ToString() +
                                     ", which counts keys (track_num_keys)");
    }
    if (provider_->open_iterators_ > 0) {
      return Status::InvalidArgument("DetachWorkingCopy on the state store of " +
                                     provider_->id_.ToString() + " with open iterators");
    }
    detached_ = true;
    dirty_ = true;  // the working copy no longer follows: an abort must rebuild
    contents_ = std::move(contents);
    return Status::OK();
  }

  Result<std::unique_ptr<StateIterator>> Iterate() override { return Scan("", std::nullopt); }
  Result<std::unique_ptr<StateIterator>> PrefixScan(std::string_view prefix) override {
    return Scan(std::string(prefix), PrefixSuccessor(prefix));
  }
  Result<std::unique_ptr<StateIterator>> RangeScan(std::string_view begin,
                                                   std::string_view end) override {
    std::optional<std::string> e;
    if (!end.empty()) e = std::string(end);
    return Scan(std::string(begin), std::move(e));
  }

  Result<int64_t> Commit() override {
    SLUICE_RETURN_NOT_OK(CheckOpen("Commit"));
    return provider_->CommitStore(this);
  }

  void Abort() override {
    if (state_ != kOpen) return;
    state_ = kAborted;
    provider_->CloseStore(this, /*discard_changes=*/dirty_);
  }

  bool committed() const override { return state_ == kCommitted; }

  StateStoreMetrics Metrics() const override {
    if (state_ != kOpen) return metrics_;
    StateStoreMetrics m;
    provider_->FillMetrics(*this, &m);
    return m;
  }

 private:
  friend class CheckpointedProvider;
  enum State { kOpen, kCommitted, kAborted };

  Status CheckOpen(std::string_view op) const {
    if (state_ == kOpen) return Status::OK();
    return Status::InvalidArgument(std::string(op) + " on the state store of " +
                                   provider_->id_.ToString() + " version " +
                                   std::to_string(version_) + ", which is already " +
                                   (state_ == kCommitted ? "committed" : "aborted"));
  }
  // Open, not detached, and the working copy loaded.
  Status CheckReadable(std::string_view op) {
    SLUICE_RETURN_NOT_OK(CheckOpen(op));
    if (detached_) {
      return Status::InvalidArgument(
          std::string(op) + " on the state store of " + provider_->id_.ToString() + " version " +
          std::to_string(version_) + " after DetachWorkingCopy: the caller holds the state");
    }
    return EnsureLoaded();
  }
  // Loads the working copy when it lags (see the constructor). An error leaves it unloaded; the
  // next operation that needs it tries again.
  Status EnsureLoaded() {
    if (!load_pending_) return Status::OK();
    const auto start = std::chrono::steady_clock::now();
    provider_->working_copy_lags_ = false;
    Status st = provider_->Rebuild(version_);
    if (!st.ok()) {
      provider_->backend_valid_ = false;
      return st.WithContext("loading state version " + std::to_string(version_) + " of " +
                            provider_->id_.ToString());
    }
    load_pending_ = false;
    provider_->load_time_ms_ = ElapsedMs(start);
    return Status::OK();
  }

  // Whether `key` was present (known from this batch's Get/Put/Remove/scan of it, else read),
  // then records that it is `present_now`. One hash lookup for a known key.
  Result<bool> ExistsAndRemember(std::string_view key, bool present_now) {
    if (auto it = known_.find(key); it != known_.end()) {
      const bool existed = it->second;
      it->second = present_now;
      return existed;
    }
    SLUICE_ASSIGN_OR_RETURN(auto old, provider_->backend_->Get(key));
    Remember(key, present_now);
    return old.has_value();
  }
  // Records whether `key` is present now. Bounded: past kMaxKnownKeys the record starts over
  // (a forgotten key is read again), so a batch touching millions of keys stays small.
  void Remember(std::string_view key, bool present) {
    if (auto it = known_.find(key); it != known_.end()) {
      it->second = present;
      return;
    }
    if (known_.size() >= kMaxKnownKeys) Forget();
    known_.emplace(std::string(key), present);
  }
  // Records what a read saw, if there is room: unlike a write, a read need not be recorded, and
  // starting over would forget what this batch's next writes need (a MultiGet of more keys than
  // the record holds, then a Put of each).
  void RememberRead(std::string_view key, bool present) {
    if (known_.size() < kMaxKnownKeys) {
      known_.emplace(std::string(key), present);  // keeps an existing record: it is current
    } else if (auto it = known_.find(key); it != known_.end()) {
      it->second = present;
    }
  }
  void Forget() {
    known_.clear();
    ++known_generation_;
  }
  // A key an iterator returned: present, unless this batch removed or wrote it since (an
  // iterator may return a key as of its creation). Such keys are already known, and a key
  // forgotten since the iterator's creation (generation changed) is not recorded.
  void RememberScanned(std::string_view key, uint64_t generation) {
    if (generation != known_generation_ || known_.size() >= kMaxKnownKeys) return;
    if (known_.find(key) == known_.end()) known_.emplace(std::string(key), true);
  }

  Result<std::unique_ptr<StateIterator>> Scan(std::string begin, std::optional<std::string> end) {
    SLUICE_RETURN_NOT_OK(CheckReadable("a scan"));
    // The iterator sees every write so far, so what it returns needs no earlier record: start
    // over when the record is half full, leaving room for the keys this scan returns (evictions
    // scan, then remove).
    if (known_.size() >= kMaxKnownKeys / 2) Forget();
    SLUICE_ASSIGN_OR_RETURN(auto it,
                            provider_->backend_->NewIterator(std::move(begin), std::move(end)));
    std::function<void(std::string_view)> on_key;
    if (provider_->options_.track_num_keys) {
      // Evictions scan, then remove what they saw: the removal need not read the key again.
      on_key = [this, generation = known_generation_](std::string_view k) {
        RememberScanned(k, generation);
      };
    }
    return std::unique_ptr<StateIterator>(
        new CountedIterator(std::move(it), &provider_->open_iterators_, std::move(on_key)));
  }

  CheckpointedProvider* provider_;
  int64_t version_;
  State state_ = kOpen;
  bool load_pending_ = false;  // the working copy lags: load it before using it
  bool detached_ = false;      // DetachWorkingCopy: changelog only, contents_ gives snapshots
  StateContentsSource contents_;
  bool dirty_ = false;  // the backend was (or may have been) modified
  StateFileWriter changelog_;
  int64_t num_updated_ = 0;
  int64_t num_removed_ = 0;
  StateStoreMetrics metrics_;  // frozen at Commit/Abort
  // The last Get (for key counting); invalidated by every write.
  // Keys whose presence this batch has seen (track_num_keys only), so that counting keys does
  // not read a key again after the operator's own Get of it.
  static constexpr size_t kMaxKnownKeys = size_t{1} << 17;
  uint64_t known_generation_ = 0;  // incremented when known_ starts over
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, bool, StringHash, std::equal_to<>> known_;
};

// ----------------------------------------------------------------------------------------------
// The provider.

CheckpointedProvider::CheckpointedProvider(StateStoreId id, StateStoreOptions options,
                                           std::unique_ptr<KvBackend> backend)
    : id_(std::move(id)),
      options_(std::move(options)),
      fs_(options_.fs != nullptr ? options_.fs : fs::LocalFileSystem()),
      dir_(StateStoreCheckpointDir(id_)),
      backend_(std::move(backend)) {}

CheckpointedProvider::~CheckpointedProvider() = default;

std::string CheckpointedProvider::PathFor(StateFileKind kind, int64_t version) const {
  return fs::JoinPath(dir_, StateFileNameFor(kind, version));
}

Status CheckpointedProvider::EnsureListed(bool refresh) {
  if (listed_ && !refresh) return Status::OK();
  changelogs_.clear();
  snapshots_.clear();
  temp_files_.clear();
  auto listed = fs_->List(dir_);
  if (!listed.ok() && !listed.status().IsNotFound()) {
    return listed.status().WithContext("listing the state of " + id_.ToString());
  }
  if (listed.ok()) {
    for (const fs::FileInfo& f : *listed) {
      if (f.is_directory) continue;
      if (fs::IsTempFileName(fs::BaseName(f.path))) {
        temp_files_.emplace_back(f.path, f.mtime_ms);
        continue;
      }
      auto name = ParseStateFileName(fs::BaseName(f.path));
      if (!name) continue;  // temporary files, _metadata, anything else
      (name->kind == StateFileKind::kChangelog ? changelogs_ : snapshots_).insert(name->version);
    }
  }
  listed_ = true;
  return Status::OK();
}

int64_t CheckpointedProvider::LatestSnapshotAtOrBelow(int64_t version) const {
  auto it = snapshots_.upper_bound(version);
  return it == snapshots_.begin() ? 0 : *std::prev(it);
}

int64_t CheckpointedProvider::CurrentNumKeys() {
  if (backend_->count_is_exact() || !options_.track_num_keys) return backend_->CountKeysCheaply();
  return num_keys_;
}

Result<int64_t> CheckpointedProvider::LatestVersion() {
  SLUICE_RETURN_NOT_OK(EnsureListed(/*refresh=*/true));
  int64_t latest = 0;
  if (!changelogs_.empty()) latest = *changelogs_.rbegin();
  if (!snapshots_.empty()) latest = std::max(latest, *snapshots_.rbegin());
  return latest;
}

Result<std::unique_ptr<StateStore>> CheckpointedProvider::GetStore(int64_t version) {
  if (store_open_) {
    return Status::InvalidArgument("a state store of " + id_.ToString() +
                                   " is still open: commit or abort it before loading another");
  }
  if (version < 0) {
    return Status::InvalidArgument("state version " + std::to_string(version) + " of " +
                                   id_.ToString() + " is negative");
  }
  const auto start = std::chrono::steady_clock::now();
  bool load_pending = false;
  if (working_copy_lags_ && working_version_ == version) {
    load_pending = true;  // this provider committed `version`; load it only if it is read
    load_time_ms_ = 0;
  } else if (!backend_valid_ || working_version_ != version) {
    working_copy_lags_ = false;
    Status st = Rebuild(version);
    if (!st.ok()) {
      backend_valid_ = false;
      return st.WithContext("loading state version " + std::to_string(version) + " of " +
                            id_.ToString());
    }
    load_time_ms_ = ElapsedMs(start);
  } else {
    load_time_ms_ = 0;
  }
  store_open_ = true;
  commit_time_ms_ = 0;
  changelog_bytes_ = 0;
  snapshot_bytes_ = 0;
  return std::unique_ptr<StateStore>(new CheckpointedStore(this, version, load_pending));
}

Status CheckpointedProvider::ClearBackend() {
  if (backend_empty_) return Status::OK();  // reopening an empty RocksDB costs ~100 ms
  SLUICE_RETURN_NOT_OK(backend_->Clear());
  backend_empty_ = true;
  return Status::OK();
}

Status CheckpointedProvider::LoadFile(StateFileKind kind, int64_t version,
                                      int64_t* num_keys_after) {
  const std::string path = PathFor(kind, version);
  SLUICE_ASSIGN_OR_RETURN(std::string bytes, fs_->ReadFile(path));
  SLUICE_ASSIGN_OR_RETURN(StateFileInfo info, ValidateStateFile(bytes, path, kind, version));
  backend_empty_ = false;
  SLUICE_RETURN_NOT_OK_CTX(backend_->Apply(bytes), "applying " + path);
  *num_keys_after = info.num_keys_after;
  return Status::OK();
}

Status CheckpointedProvider::Rebuild(int64_t version) {
  backend_valid_ = false;
  SLUICE_RETURN_NOT_OK(EnsureListed(/*refresh=*/true));
  int64_t num_keys_after = 0;
  int64_t base = 0;
  if (version > 0) {
    SLUICE_ASSIGN_OR_RETURN(int64_t latest, LatestVersion());
    if (version > latest) {
      return Status::NotFound("version " + std::to_string(version) + " does not exist in " + dir_ +
                              ": the latest version there is " + std::to_string(latest));
    }
    // k: the largest version <= `version` without a changelog. A usable snapshot is at k or later.
    int64_t k = version;
    while (k > 0 && changelogs_.count(k) > 0) --k;
    std::vector<int64_t> candidates;  // newest first
    for (auto it = snapshots_.rbegin(); it != snapshots_.rend(); ++it) {
      if (*it <= version && *it >= k) candidates.push_back(*it);
    }
    if (k == 0) candidates.push_back(0);
    if (candidates.empty()) {
      return Status::NotFound(PathFor(StateFileKind::kChangelog, k) +
                              " is missing and no snapshot between versions " + std::to_string(k) +
                              " and " + std::to_string(version) +
                              " replaces it (purged by maintenance, or deleted)");
    }
    Status first_error;
    bool loaded = false;
    for (int64_t s : candidates) {
      SLUICE_RETURN_NOT_OK(ClearBackend());
      if (s == 0) {
        num_keys_after = 0;
        base = 0;
        loaded = true;
        break;
      }
      Status st = LoadFile(StateFileKind::kSnapshot, s, &num_keys_after);
      if (st.ok()) {
        base = s;
        loaded = true;
        break;
      }
      if (!st.IsCorruption() && !st.IsNotFound() && !st.IsNotSupported()) return st;
      SLUICE_LOG(kWarning) << "state of " << id_.ToString()
                           << ": skipping snapshot: " << st.ToString();
      if (first_error.ok()) first_error = st;
    }
    if (!loaded) return first_error;
    for (int64_t v = base + 1; v <= version; ++v) {
      SLUICE_RETURN_NOT_OK(LoadFile(StateFileKind::kChangelog, v, &num_keys_after));
    }
    loaded_from_snapshot_ = base;
    changelogs_replayed_ = version - base;
  } else {
    SLUICE_RETURN_NOT_OK(ClearBackend());
    loaded_from_snapshot_ = 0;
    changelogs_replayed_ = 0;
  }
  if (options_.track_num_keys && !backend_->count_is_exact()) {
    if (num_keys_after >= 0) {
      num_keys_ = num_keys_after;
    } else {
      SLUICE_ASSIGN_OR_RETURN(num_keys_, backend_->CountKeysExactly());
    }
  }
  working_version_ = version;
  backend_valid_ = true;
  return Status::OK();
}

void CheckpointedProvider::FillMetrics(const CheckpointedStore& store, StateStoreMetrics* m) {
  // Unknown while the caller holds the state or the lagging working copy is not loaded yet.
  m->num_keys = store.detached_ || store.load_pending_ ? -1 : CurrentNumKeys();
  m->memory_used_bytes =
      backend_->MemoryBytes() + static_cast<int64_t>(store.changelog_.size_bytes());
  m->num_updated = store.num_updated_;
  m->num_removed = store.num_removed_;
  m->commit_time_ms = commit_time_ms_;
  m->custom["changelogBytes"] = changelog_bytes_;
  m->custom["snapshotBytes"] = snapshot_bytes_;
  const int64_t v =
      store.state_ == CheckpointedStore::kCommitted ? store.version_ : working_version_;
  m->custom["snapshotLagVersions"] = v - LatestSnapshotAtOrBelow(v);
  m->custom["loadTimeMs"] = load_time_ms_;
  m->custom["loadedFromSnapshot"] = loaded_from_snapshot_;
  m->custom["changelogsReplayed"] = changelogs_replayed_;
  m->custom["snapshotFailures"] = snapshot_failures_;
  backend_->AddCustomMetrics(&m->custom);
}

void CheckpointedProvider::CloseStore(CheckpointedStore* store, bool discard_changes) {
  // The backend already holds the changes; discarding them means rebuilding on the next load.
  if (discard_changes) {
    backend_valid_ = false;
    working_copy_lags_ = false;  // the next store rebuilds from the checkpoint
  }
  FillMetrics(*store, &store->metrics_);
  last_metrics_ = store->metrics_;
  store_open_ = false;
}

Result<int64_t> CheckpointedProvider::CommitStore(CheckpointedStore* store) {
  if (open_iterators_ > 0) {
    return Status::InvalidArgument(std::to_string(open_iterators_) +
                                   " iterator(s) of the state store of " + id_.ToString() +
                                   " are still open at Commit: destroy them first");
  }
  const auto start = std::chrono::steady_clock::now();
  const int64_t v = store->version_ + 1;
  Status st = [&]() -> Status {
    SLUICE_RETURN_NOT_OK(EnsureListed(/*refresh=*/false));
    const std::string path = PathFor(StateFileKind::kChangelog, v);
    const bool rerun = changelogs_.count(v) > 0;
    // A version written before by a run that crashed before the query committed the batch is
    // rewritten. Its snapshot goes first: it must never pair with the new changelog.
    if (snapshots_.count(v) > 0) {
      Status del = fs_->DeleteFile(PathFor(StateFileKind::kSnapshot, v));
      if (!del.ok() && !del.IsNotFound()) return del;
      snapshots_.erase(v);
    }
    int64_t num_keys = -1;  // unknown for a detached store (its caller counts)
    if (!store->detached_) {
      // The working copy must hold the version before it is recorded as committed.
      SLUICE_RETURN_NOT_OK(store->EnsureLoaded());
      SLUICE_RETURN_NOT_OK(backend_->Flush());
      if (backend_->count_is_exact() || options_.track_num_keys) num_keys = CurrentNumKeys();
    }
    std::string bytes = store->changelog_.Finish(num_keys);
    SLUICE_RETURN_NOT_OK(fs_->MaybeCrash(kCrashBeforeChangelog));
    fs::WriteOptions wo;
    wo.sync = options_.sync;
    if (rerun) {
      SLUICE_RETURN_NOT_OK(fs_->AtomicReplace(path, bytes, wo));
    } else {
      Status created = fs_->CreateIfAbsent(path, bytes, wo);
      if (created.IsAlreadyExists()) {
        changelogs_.insert(v);  // it exists: a later re-run must replace it
        return Status::Conflict(path +
                                " appeared while this query was writing it: is another "
                                "query using the same checkpoint location?");
      }
      SLUICE_RETURN_NOT_OK(created);
    }
    changelogs_.insert(v);
    changelog_bytes_ = static_cast<int64_t>(bytes.size());
    return fs_->MaybeCrash(kCrashAfterChangelog);
  }();
  if (st.ok() && v - LatestSnapshotAtOrBelow(v) >= options_.snapshot_interval) {
    Status snap = store->detached_ ? WriteSnapshotFrom(v, store->contents_, &snapshot_bytes_)
                                   : WriteSnapshot(v, &snapshot_bytes_);
    if (snap.ok()) {
      st = fs_->MaybeCrash(kCrashAfterSnapshot);
    } else if (snap.IsCancelled()) {
      st = snap;  // the process is going down (an injected crash): not a mere snapshot failure
    } else {
      // The changelog made the version durable; a missing snapshot only lengthens recovery.
      ++snapshot_failures_;
      snapshot_bytes_ = 0;
      SLUICE_LOG(kWarning) << "state of " << id_.ToString() << ": snapshot of version " << v
                           << " not written: " << snap.ToString();
    }
  }
  if (!st.ok()) {
    store->state_ = CheckpointedStore::kAborted;
    CloseStore(store, /*discard_changes=*/true);
    return st.WithContext("committing state version " + std::to_string(v) + " of " +
                          id_.ToString());
  }
  working_version_ = v;
  if (store->detached_) {
    backend_valid_ = false;  // it holds an older version (or a part of this batch's writes)
    working_copy_lags_ = true;
  }
  store->version_ = v;
  store->state_ = CheckpointedStore::kCommitted;
  commit_time_ms_ = ElapsedMs(start);
  CloseStore(store, /*discard_changes=*/false);
  return v;
}

Status CheckpointedProvider::WriteSnapshot(int64_t version, int64_t* bytes_written) {
  StateFileWriter writer(StateFileKind::kSnapshot, version);
  SLUICE_ASSIGN_OR_RETURN(auto it, backend_->NewIterator("", std::nullopt));
  for (; it->Valid(); it->Next()) writer.Put(it->key(), it->value());
  SLUICE_RETURN_NOT_OK(it->status());
  it.reset();
  return PublishSnapshot(version, writer.Finish(writer.num_records()), bytes_written);
}

Status CheckpointedProvider::WriteSnapshotFrom(int64_t version, const StateContentsSource& contents,
                                               int64_t* bytes_written) {
  StateFileWriter writer(StateFileKind::kSnapshot, version);
  std::string last;
  bool ordered = true;
  SLUICE_RETURN_NOT_OK(contents([&](std::string_view key, std::string_view value) {
    if (writer.num_records() > 0 && !(std::string_view(last) < key)) ordered = false;
    last.assign(key);
    writer.Put(key, value);
  }));
  if (!ordered) {
    return Status::Internal("the state given for the snapshot of version " +
                            std::to_string(version) + " of " + id_.ToString() +
                            " is not in strictly increasing key order");
  }
  return PublishSnapshot(version, writer.Finish(writer.num_records()), bytes_written);
}

Status CheckpointedProvider::PublishSnapshot(int64_t version, const std::string& bytes,
                                             int64_t* bytes_written) {
  fs::WriteOptions wo;
  wo.sync = options_.sync;
  // Record it first: a failed write may still leave the file (a non-atomic store), and a re-run
  // of this version must then delete it.
  snapshots_.insert(version);
  const std::string path = PathFor(StateFileKind::kSnapshot, version);
  Status st = fs_->CreateIfAbsent(path, bytes, wo);
  if (!st.ok()) {
    auto exists = fs_->Exists(path);
    if (exists.ok() && !*exists) snapshots_.erase(version);  // cleanly failed: retry next commit
    return st;
  }
  *bytes_written = static_cast<int64_t>(bytes.size());
  return Status::OK();
}

Status CheckpointedProvider::Maintenance() {
  if (store_open_) {
    return Status::InvalidArgument("maintenance of the state of " + id_.ToString() +
                                   " while a store is open");
  }
  SLUICE_ASSIGN_OR_RETURN(int64_t latest, LatestVersion());
  // Temporary files of writes that a crash interrupted (never the name of a version).
  const int64_t now_ms = WallClockMs();
  for (const auto& [path, mtime_ms] : temp_files_) {
    if (now_ms - mtime_ms < kTempFileMinAgeMs) continue;
    Status st = fs_->DeleteFile(path);
    if (!st.ok() && !st.IsNotFound())
      return st.WithContext("state maintenance of " + id_.ToString());
  }
  temp_files_.clear();
  // The oldest version that must stay loadable, and the snapshot it starts from.
  const int64_t oldest = latest - options_.min_versions_to_retain + 1;
  if (oldest <= 1) return Status::OK();
  const int64_t base = LatestSnapshotAtOrBelow(oldest);
  if (base == 0) return Status::OK();
  std::vector<std::pair<StateFileKind, int64_t>> doomed;
  for (int64_t s : snapshots_) {
    if (s < base) doomed.emplace_back(StateFileKind::kSnapshot, s);
  }
  for (int64_t c : changelogs_) {
    if (c <= base) doomed.emplace_back(StateFileKind::kChangelog, c);
  }
  for (const auto& [kind, v] : doomed) {
    Status st = fs_->DeleteFile(PathFor(kind, v));
    if (!st.ok() && !st.IsNotFound()) {
      return st.WithContext("state maintenance of " + id_.ToString());
    }
    (kind == StateFileKind::kSnapshot ? snapshots_ : changelogs_).erase(v);
  }
  return Status::OK();
}

}  // namespace sluice::state
