// State stores: the versioned key-value state of stateful operators (aggregation, dedup, joins,
// custom state). docs/state.md explains the design; docs/formats/state.md the bytes on disk.
//
// Model (Spark Structured Streaming, §4 of the semantics doc): the state of one operator is split
// into partitions; each partition has one StateStoreProvider. Batch N loads state version N with
// GetStore(N), applies its changes, and Commit() makes version N+1 durable in the checkpoint
// (`<checkpoint>/state/<opId>/<partition>/<N+1>.changelog`, plus a `<N+1>.snapshot` every
// `snapshot_interval` versions). Version 0 is the empty state and has no files. Loading any
// version v rebuilds exactly the state that the commit of v produced, on this machine or on a new
// one that has only the checkpoint directory.
//
// Keys and values are byte strings; operators encode them. Keys are ordered bytewise (unsigned
// lexicographic, memcmp order), which is the order of every scan.
//
// Thread safety: a provider and the store it hands out are used by one thread at a time (the
// task that processes the partition). Different providers, also of the same operator, may be used
// from different threads concurrently; that is how partitions run in parallel (partitions.h).
//
// Errors: every method returns Status/Result; nothing throws. I/O errors carry the path; damaged
// checkpoint files are Corruption naming the file.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/status.h"
#include "fs/file_system.h"

namespace sluice::state {

// Which state store instance: one operator's partition (and store, for joins' several stores).
struct StateStoreId {
  // The query's checkpoint location (the directory holding metadata, offsets/, commits/, state/).
  std::string checkpoint_root;
  // The operator's id: pre-order position among the stateful operators of the plan (§1).
  int64_t operator_id = 0;
  // 0 <= partition_id < the operator's number of partitions (frozen in the checkpoint).
  int32_t partition_id = 0;
  // "default" for one store per partition; joins use several names (Spark's layout).
  std::string store_name = "default";

  // "operator 3 partition 7" (+ " store <name>" for a non-default store), for messages.
  std::string ToString() const;
};

// `<checkpoint_root>/state/<operator_id>/<partition_id>` for the default store and
// `.../<partition_id>/<store_name>` for any other store: where the store's checkpoint files live.
std::string StateStoreCheckpointDir(const StateStoreId& id);

// Crash points that StateStore::Commit reaches (FileSystem::MaybeCrash: SLUICE_CRASH_AT=<point>
// kills the process there; FaultInjectingFileSystem simulates it). In order:
inline constexpr char kCrashBeforeChangelog[] = "state.before_changelog_write";
inline constexpr char kCrashAfterChangelog[] = "state.after_changelog_write";
inline constexpr char kCrashAfterSnapshot[] = "state.after_snapshot_write";  // snapshot versions

enum class StateStoreProviderKind {
  kRocksDb,   // the default: one RocksDB per partition in a local working directory
  kInMemory,  // a sorted map in memory; for tests and small state. Same files, same durability.
};

// Memory shared by many RocksDB instances (all partitions of a query, say): one LRU block cache
// to which the memtables are also charged, so the total stays near `total_bytes`. Thread-safe;
// shared by the providers that use it.
class RocksDbMemoryBudget {
 public:
  // `write_buffer_fraction` of the budget may be taken by memtables (RocksDB WriteBufferManager),
  // the rest holds cached blocks. InvalidArgument when total_bytes < 1 MiB or the fraction is not
  // in (0, 1).
  static Result<std::shared_ptr<RocksDbMemoryBudget>> Create(int64_t total_bytes,
                                                             double write_buffer_fraction = 0.5);
  ~RocksDbMemoryBudget();
  int64_t total_bytes() const;
  // Bytes currently charged to the cache (blocks + memtables).
  int64_t usage_bytes() const;

  struct Impl;
  Impl* impl() const { return impl_.get(); }

 private:
  explicit RocksDbMemoryBudget(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// RocksDB tuning. The defaults bound one instance to about block_cache_bytes in total (memtables
// are charged to the cache) plus index/filter blocks, which are cached too.
struct RocksDbSettings {
  // LRU block cache of this instance. Default 32 MiB.
  int64_t block_cache_bytes = int64_t{32} << 20;
  // One memtable; RocksDB flushes it to an SST when full. Default 8 MiB.
  int64_t write_buffer_bytes = int64_t{8} << 20;
  // Memtables kept before writes stall (active + immutable). Default 2.
  int max_write_buffer_number = 2;
  // SST files kept open (-1: unlimited). Default 64: bounds file descriptors and table readers.
  int max_open_files = 64;
  // When set, this budget's cache and write buffer manager replace block_cache_bytes and
  // bound all instances that share it together (OperatorStateStores shares one per operator).
  std::shared_ptr<RocksDbMemoryBudget> shared_budget;
};

struct StateStoreOptions {
  StateStoreProviderKind kind = StateStoreProviderKind::kRocksDb;
  // The file system of the checkpoint. Null means fs::LocalFileSystem().
  std::shared_ptr<fs::FileSystem> fs;
  // RocksDB only: the local working directory of this partition's database. It is a cache: it is
  // deleted and recreated by Open (recovery always starts from the checkpoint), so it must belong
  // to this provider alone. Required for kRocksDb.
  std::string local_dir;
  // A snapshot is written at commit of version v when v - (latest snapshot version) >= this.
  // Default 10 (Spark's minDeltasForSnapshot). >= 1.
  int64_t snapshot_interval = 10;
  // Maintenance() keeps every file needed to load each of the latest this-many versions.
  // Default 100 (Spark's minBatchesToRetain). >= 1.
  int64_t min_versions_to_retain = 100;
  // fsync checkpoint files (and directories). Turn off only in tests and benchmarks.
  bool sync = true;
  // Keep an exact key count (numKeys): each Put/Remove first reads the key, as Spark's
  // trackTotalNumberOfRows. When false, RocksDB reports an estimate. Default true.
  bool track_num_keys = true;
  RocksDbSettings rocksdb;
};

// Metrics of a store, as the progress reporting needs them (stateOperators in the progress JSON).
struct StateStoreMetrics {
  int64_t num_keys = 0;           // keys in the state after this version's changes; -1 after
                                  // DetachWorkingCopy (the caller counts) and while a lagging
                                  // working copy is not loaded yet
  int64_t memory_used_bytes = 0;  // RocksDB memtables + table readers (or the map), plus the
                                  // open changelog buffer; the block cache is in custom metrics
  int64_t num_updated = 0;        // Put calls in this version
  int64_t num_removed = 0;        // Remove calls that removed a key (all Remove calls when
                                  // track_num_keys is false)
  int64_t commit_time_ms = 0;     // time of the last Commit (writing the files)
  // Provider figures, camelCase as in Spark's customMetrics:
  //   changelogBytes        bytes of the changelog written by the last commit
  //   snapshotBytes         bytes of the snapshot written by the last commit (0 when none)
  //   snapshotLagVersions   versions since the latest snapshot (after the last commit)
  //   loadTimeMs            time GetStore spent rebuilding from the checkpoint (0 when reused)
  //   loadedFromSnapshot    version of the snapshot the last rebuild started from
  //   changelogsReplayed    changelog files applied by the last rebuild
  //   snapshotFailures      snapshot writes that failed since Open (commits still succeeded)
  //   rocksdbBlockCacheUsageBytes, rocksdbMemtableBytes, rocksdbSstBytes (RocksDB only)
  std::map<std::string, int64_t> custom;
};

// An iterator over a range of a store, in key order.
//
// Views returned by key() and value() stay valid until the next call on the iterator or on the
// store. The store may be modified while an iterator is open (eviction removes as it scans): the
// iterator then may or may not see changes to keys it has not yet reached, and never returns a
// key twice. All iterators must be destroyed before the store's Commit/Abort.
class StateIterator {
 public:
  virtual ~StateIterator() = default;
  virtual bool Valid() const = 0;
  virtual std::string_view key() const = 0;    // requires Valid()
  virtual std::string_view value() const = 0;  // requires Valid()
  virtual void Next() = 0;                     // requires Valid()
  // Moves to the first key >= max(target, the scan's begin) within the scan's range, forward or
  // backward, reading the same data as before (an iterator over a prefix may seek to any key
  // with that prefix). One iterator seeked per key is much cheaper than a scan per key.
  virtual void Seek(std::string_view target) = 0;
  // Non-OK when the iteration stopped on an error; Valid() is then false. Check it at the end.
  virtual Status status() const = 0;
};

// The complete contents of one version, from a caller that holds the state itself
// (StateStore::DetachWorkingCopy): calls emit(key, value) once per key, keys strictly increasing
// bytewise, and returns OK, or why it could not give them.
using StateContentsSource = std::function<Status(
    const std::function<void(std::string_view key, std::string_view value)>& emit)>;

// One version of one partition's state, open for reading and writing by one batch.
//
// Lifecycle: GetStore(N) -> reads/writes -> Commit() (version N+1 is durable) or Abort() (all
// changes discarded). After either, only Metrics() and version() may be called. Destroying a store
// that is neither committed nor aborted aborts it.
// Ownership: the provider that made it must outlive it.
class StateStore {
 public:
  virtual ~StateStore() = default;

  virtual const StateStoreId& id() const = 0;
  // The version loaded (N); after Commit, the committed version (N+1).
  virtual int64_t version() const = 0;

  // The value of `key`, or nullopt when absent. Sees this batch's own writes.
  virtual Result<std::optional<std::string>> Get(std::string_view key) = 0;
  // Get of each key, as one batched read (sorted keys read fastest). Result i is keys[i]'s.
  virtual Result<std::vector<std::optional<std::string>>> MultiGet(
      const std::vector<std::string_view>& keys) = 0;
  virtual Status Put(std::string_view key, std::string_view value) = 0;
  // Removes `key`; OK when absent.
  virtual Status Remove(std::string_view key) = 0;

  // For a caller that keeps an exact copy of the state in memory and makes every change to both
  // (ops/dedup_state_mirror.h): declares that it holds this version's state and reads nothing more
  // from this store. From the call on, Put and Remove are only recorded in the changelog (a Remove
  // as given: the caller removes only keys it holds), not applied to the provider's working copy
  // (RocksDB or the map), which stays behind and is rebuilt from the checkpoint when a later store
  // of the provider is read (GetStore of the version this store commits does not load it until a
  // read, a write without detaching, or a Commit without detaching needs it). The changelogs, and
  // so recovery and exactly-once, are unchanged. A snapshot due at this commit is written from
  // `contents`, which Commit calls on the committing thread: it must then give the state after
  // this batch's changes. A source that fails, or gives keys out of order, costs only that
  // snapshot (snapshotFailures; the changelog keeps the version durable and loadable).
  // InvalidArgument when an iterator is open, `contents` is empty, or the provider counts keys
  // (track_num_keys: counting needs reads). Afterwards Get, MultiGet and scans are
  // InvalidArgument, Metrics().num_keys is -1 (the caller counts) and the changelog's
  // numKeysAfter is unknown (-1).
  virtual Status DetachWorkingCopy(StateContentsSource contents) = 0;

  // Every key, in order.
  virtual Result<std::unique_ptr<StateIterator>> Iterate() = 0;
  // Keys that start with `prefix`, in order (an empty prefix is Iterate()).
  virtual Result<std::unique_ptr<StateIterator>> PrefixScan(std::string_view prefix) = 0;
  // Keys k with begin <= k < end, in order; an empty `end` means no upper bound.
  virtual Result<std::unique_ptr<StateIterator>> RangeScan(std::string_view begin,
                                                           std::string_view end) = 0;

  // Makes this batch's changes durable as version()+1 and returns that version. On error the
  // changes are discarded as by Abort (the provider rebuilds on the next GetStore) and the
  // returned Status says why. InvalidArgument when already committed/aborted or iterators are
  // still open.
  virtual Result<int64_t> Commit() = 0;
  // Discards this batch's changes. Idempotent; a no-op after Commit.
  virtual void Abort() = 0;

  virtual bool committed() const = 0;
  // Counters of this version (updates, removes), the state size and the last commit's figures.
  virtual StateStoreMetrics Metrics() const = 0;
};

// The versions of one partition's state: loads, commits and cleans them up.
class StateStoreProvider {
 public:
  // Opens the provider of `id` with `options` (kind, working directory, settings). Creates
  // nothing in the checkpoint (the first commit does). Wipes options.local_dir (RocksDB).
  // InvalidArgument for bad options.
  static Result<std::unique_ptr<StateStoreProvider>> Open(StateStoreId id,
                                                          StateStoreOptions options);

  virtual ~StateStoreProvider() = default;

  virtual const StateStoreId& id() const = 0;

  // Loads version `version` (0 = empty) for one batch. Reuses the working state when it already
  // holds exactly that version (the batch before committed it here); otherwise rebuilds it from
  // the checkpoint: the latest readable snapshot <= version plus the changelogs after it.
  // NotFound when a file needed for `version` is missing (names it), Corruption when one is
  // damaged (names it), InvalidArgument when a store from this provider is still open.
  virtual Result<std::unique_ptr<StateStore>> GetStore(int64_t version) = 0;

  // The largest version with a changelog or snapshot in the checkpoint; 0 when there is none.
  virtual Result<int64_t> LatestVersion() = 0;

  // Deletes snapshots and changelogs not needed to load any of the latest
  // min_versions_to_retain versions. Safe to call between batches (not while a store is open).
  virtual Status Maintenance() = 0;

  // Metrics of the store most recently handed out (kept after it is gone).
  virtual StateStoreMetrics LastMetrics() const = 0;
};

}  // namespace sluice::state
