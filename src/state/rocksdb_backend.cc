// The RocksDB backend: one database per partition in a local working directory.
//
// The directory is a cache of the checkpoint (recovery always starts from the checkpoint), so the
// WAL is off and nothing is synced. RocksDB's info log goes to Sluice's log, not to a LOG file
// (state/rocksdb_logger.h: on a full disk the file's writer aborted the process). Memory is bounded
// by an LRU block cache to which memtables are charged (WriteBufferManager), plus index and filter
// blocks, which are cached too.
//
// Writes are buffered in a WriteBatch and applied with one DB::Write before a read that may need
// them (a Get or MultiGet of a key that a Bloom filter of the buffered keys may hold, a new
// iterator), at Flush (commit) and past kMaxPendingBytes: one DBImpl::WriteImpl
// per Put/Delete (write-thread handoff, perf context, memtable insert) was a quarter of the CPU
// of write-heavy batches. Operators read a batch's keys first and write them after (dedup, joins,
// aggregation, evictions), so runs of writes are long. (A WriteBatchWithIndex, which reads could
// see without a flush, was tried: its index insert per write cost more than it saved.)
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/table_properties_collectors.h>
#include <rocksdb/write_batch.h>
#include <rocksdb/write_buffer_manager.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "fs/file_system.h"
#include "state/kv_backend.h"
#include "state/rocksdb_logger.h"

namespace sluice::state {

struct RocksDbMemoryBudget::Impl {
  int64_t total_bytes = 0;
  std::shared_ptr<rocksdb::Cache> cache;
  std::shared_ptr<rocksdb::WriteBufferManager> write_buffer_manager;
};

RocksDbMemoryBudget::RocksDbMemoryBudget(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RocksDbMemoryBudget::~RocksDbMemoryBudget() = default;

Result<std::shared_ptr<RocksDbMemoryBudget>> RocksDbMemoryBudget::Create(
    int64_t total_bytes, double write_buffer_fraction) {
  if (total_bytes < (int64_t{1} << 20)) {
    return Status::InvalidArgument("state memory budget must be at least 1 MiB, got " +
                                   std::to_string(total_bytes) + " bytes");
  }
  if (!(write_buffer_fraction > 0 && write_buffer_fraction < 1)) {
    return Status::InvalidArgument("write_buffer_fraction must be in (0, 1)");
  }
  auto impl = std::make_unique<Impl>();
  impl->total_bytes = total_bytes;
  rocksdb::LRUCacheOptions co;
  co.capacity = static_cast<size_t>(total_bytes);
  co.strict_capacity_limit = false;
  co.high_pri_pool_ratio = 0.1;  // index and filter blocks
  impl->cache = rocksdb::NewLRUCache(co);
  impl->write_buffer_manager = std::make_shared<rocksdb::WriteBufferManager>(
      static_cast<size_t>(static_cast<double>(total_bytes) * write_buffer_fraction), impl->cache,
      // Writes wait for flushes rather than exceed the budget. Nothing may be charged to the
      // manager that a flush cannot free (no memtable Bloom filter, see the options below):
      // with 200 partitions such charges alone exceeded the budget and writes stalled for ever.
      /*allow_stall=*/true);
  return std::shared_ptr<RocksDbMemoryBudget>(new RocksDbMemoryBudget(std::move(impl)));
}

int64_t RocksDbMemoryBudget::total_bytes() const { return impl_->total_bytes; }
int64_t RocksDbMemoryBudget::usage_bytes() const {
  return static_cast<int64_t>(impl_->cache->GetUsage());
}

namespace {

Status FromRocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return Status::OK();
  std::string msg = std::string(what) + ": " + s.ToString();
  if (s.IsCorruption()) return Status::Corruption(msg);
  if (s.IsNotFound()) return Status::NotFound(msg);
  if (s.IsInvalidArgument()) return Status::InvalidArgument(msg);
  return Status::IOError(msg);
}

rocksdb::Slice ToSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

class RocksIterator final : public StateIterator {
 public:
  RocksIterator(rocksdb::DB* db, std::string begin, std::optional<std::string> end)
      : begin_(std::move(begin)), end_(std::move(end)) {
    rocksdb::ReadOptions ro;
    if (end_) {
      upper_ = rocksdb::Slice(*end_);
      ro.iterate_upper_bound = &upper_;
    }
    // An iterator reads an implicit snapshot: writes made while it is open are not seen.
    it_.reset(db->NewIterator(ro));
    it_->Seek(begin_);
  }
  bool Valid() const override { return it_->Valid(); }
  std::string_view key() const override {
    auto k = it_->key();
    return {k.data(), k.size()};
  }
  std::string_view value() const override {
    auto v = it_->value();
    return {v.data(), v.size()};
  }
  void Next() override { it_->Next(); }
  void Seek(std::string_view target) override {
    if (target < std::string_view(begin_)) {
      it_->Seek(begin_);
    } else {
      it_->Seek(ToSlice(target));
    }
  }
  Status status() const override { return FromRocks(it_->status(), "iterating state"); }

 private:
  std::string begin_;
  std::optional<std::string> end_;
  rocksdb::Slice upper_;
  std::unique_ptr<rocksdb::Iterator> it_;
};

class RocksDbBackend final : public KvBackend {
 public:
  RocksDbBackend(std::string dir, RocksDbSettings settings)
      : dir_(std::move(dir)), settings_(std::move(settings)) {
    wo_.disableWAL = true;
    wo_.sync = false;
  }
  ~RocksDbBackend() override { Close(); }

  Status OpenFresh() {
    pending_.Clear();  // buffered writes of the old contents are dropped with them
    pending_filter_.clear();
    Close();
    SLUICE_RETURN_NOT_OK(fs::LocalFileSystem()->DeleteRecursive(dir_));
    SLUICE_RETURN_NOT_OK(fs::LocalFileSystem()->CreateDirectories(dir_));
    rocksdb::Options o;
    o.create_if_missing = true;
    o.error_if_exists = true;
    o.max_open_files = settings_.max_open_files;
    o.write_buffer_size = static_cast<size_t>(settings_.write_buffer_bytes);
    o.max_write_buffer_number = settings_.max_write_buffer_number;
    o.max_background_jobs = 2;
    o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
    o.info_log = NewRocksDbLogger(dir_);
    o.avoid_flush_during_shutdown = true;
    // No memtable Bloom filter: it is allocated with every memtable and charged to the shared
    // write buffer manager, so 200 partitions' empty memtables alone exceeded a 256 MiB budget
    // and writes stalled for ever (AggregateLoopTest.AppendModeWithRocksDbAndTheDefaultPartitions).
    // Evictions delete many keys and then scan again next batch: files dense with deletions are
    // compacted early so that scans do not keep stepping over their tombstones.
    o.table_properties_collector_factories.emplace_back(
        rocksdb::NewCompactOnDeletionCollectorFactory(/*sliding_window_size=*/65536,
                                                      /*deletion_trigger=*/16384));
    rocksdb::BlockBasedTableOptions t;
    if (settings_.shared_budget) {
      t.block_cache = settings_.shared_budget->impl()->cache;
      o.write_buffer_manager = settings_.shared_budget->impl()->write_buffer_manager;
    } else {
      rocksdb::LRUCacheOptions co;
      co.capacity = static_cast<size_t>(settings_.block_cache_bytes);
      co.high_pri_pool_ratio = 0.1;
      t.block_cache = rocksdb::NewLRUCache(co);
      o.write_buffer_manager = std::make_shared<rocksdb::WriteBufferManager>(
          static_cast<size_t>(settings_.block_cache_bytes / 2), t.block_cache,
          /*allow_stall=*/true);  // see RocksDbMemoryBudget::Create
    }
    cache_ = t.block_cache;
    t.cache_index_and_filter_blocks = true;
    t.cache_index_and_filter_blocks_with_high_priority = true;
    t.pin_l0_filter_and_index_blocks_in_cache = true;
    t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    t.format_version = 5;
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
    rocksdb::DB* db = nullptr;
    SLUICE_RETURN_NOT_OK(
        FromRocks(rocksdb::DB::Open(o, dir_, &db), "opening state database " + dir_));
    db_.reset(db);
    return Status::OK();
  }

  Result<std::optional<std::string>> Get(std::string_view key) override {
    if (MayBePending(key)) SLUICE_RETURN_NOT_OK(Flush());
    std::string value;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), ToSlice(key), &value);
    if (s.IsNotFound()) return std::optional<std::string>();
    SLUICE_RETURN_NOT_OK(FromRocks(s, "reading state in " + dir_));
    return std::optional<std::string>(std::move(value));
  }
  Result<std::vector<std::optional<std::string>>> MultiGet(
      const std::vector<std::string_view>& keys) override {
    for (std::string_view k : keys) {
      if (!MayBePending(k)) continue;
      SLUICE_RETURN_NOT_OK(Flush());
      break;
    }
    const size_t n = keys.size();
    std::vector<std::optional<std::string>> out(n);
    // In chunks: RocksDB keeps per-key contexts in a vector that a huge call reallocates again
    // and again (4% of a dedup batch with 125K keys in one call).
    constexpr size_t kChunk = 256;
    std::vector<rocksdb::Slice> slices(std::min(n, kChunk));
    std::vector<rocksdb::PinnableSlice> values(std::min(n, kChunk));
    std::vector<rocksdb::Status> statuses(std::min(n, kChunk));
    for (size_t begin = 0; begin < n; begin += kChunk) {
      const size_t m = std::min(kChunk, n - begin);
      bool sorted = true;
      for (size_t i = 0; i < m; ++i) {
        slices[i] = ToSlice(keys[begin + i]);
        if (i > 0 && keys[begin + i] < keys[begin + i - 1]) sorted = false;
        values[i].Reset();
      }
      db_->MultiGet(rocksdb::ReadOptions(), db_->DefaultColumnFamily(), m, slices.data(),
                    values.data(), statuses.data(), sorted);
      for (size_t i = 0; i < m; ++i) {
        if (statuses[i].IsNotFound()) continue;
        SLUICE_RETURN_NOT_OK(FromRocks(statuses[i], "reading state in " + dir_));
        out[begin + i].emplace(values[i].data(), values[i].size());
      }
    }
    return out;
  }
  Status Put(std::string_view key, std::string_view value) override {
    SLUICE_RETURN_NOT_OK(
        FromRocks(pending_.Put(ToSlice(key), ToSlice(value)), "writing state in " + dir_));
    return AfterWrite(key);
  }
  Status Delete(std::string_view key) override {
    SLUICE_RETURN_NOT_OK(FromRocks(pending_.Delete(ToSlice(key)), "deleting state in " + dir_));
    return AfterWrite(key);
  }
  Status Flush() override {
    if (pending_.Count() == 0) return Status::OK();
    rocksdb::Status s = db_->Write(wo_, &pending_);
    pending_.Clear();
    std::fill(pending_filter_.begin(), pending_filter_.end(), 0);
    return FromRocks(s, "writing state in " + dir_);
  }
  Result<std::unique_ptr<StateIterator>> NewIterator(std::string begin,
                                                     std::optional<std::string> end) override {
    SLUICE_RETURN_NOT_OK(Flush());
    return std::unique_ptr<StateIterator>(
        new RocksIterator(db_.get(), std::move(begin), std::move(end)));
  }
  Status Clear() override { return OpenFresh(); }
  Status Apply(std::string_view file_bytes) override {
    SLUICE_RETURN_NOT_OK(Flush());
    rocksdb::WriteBatch batch;
    Status st = ForEachStateRecord(file_bytes, [&](const StateRecord& r) -> Status {
      rocksdb::Status s =
          r.is_delete ? batch.Delete(ToSlice(r.key)) : batch.Put(ToSlice(r.key), ToSlice(r.value));
      if (!s.ok()) return FromRocks(s, "building a write batch");
      if (batch.GetDataSize() >= kApplyChunkBytes) {
        SLUICE_RETURN_NOT_OK(FromRocks(db_->Write(wo_, &batch), "loading state into " + dir_));
        batch.Clear();
      }
      return Status::OK();
    });
    SLUICE_RETURN_NOT_OK(st);
    return FromRocks(db_->Write(wo_, &batch), "loading state into " + dir_);
  }
  int64_t CountKeysCheaply() override { return IntProperty("rocksdb.estimate-num-keys"); }
  Result<int64_t> CountKeysExactly() override {
    SLUICE_RETURN_NOT_OK(Flush());
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    int64_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    SLUICE_RETURN_NOT_OK(FromRocks(it->status(), "counting state keys in " + dir_));
    return n;
  }
  bool count_is_exact() const override { return false; }
  int64_t MemoryBytes() override {
    // Memtables, plus table readers not charged to the cache. The block cache may be shared;
    // it is reported separately (rocksdbBlockCacheUsageBytes).
    return IntProperty("rocksdb.cur-size-all-mem-tables") +
           IntProperty("rocksdb.estimate-table-readers-mem") +
           static_cast<int64_t>(pending_.GetDataSize());
  }
  void AddCustomMetrics(std::map<std::string, int64_t>* custom) override {
    (*custom)["rocksdbBlockCacheUsageBytes"] = static_cast<int64_t>(cache_->GetUsage());
    (*custom)["rocksdbMemtableBytes"] = IntProperty("rocksdb.cur-size-all-mem-tables");
    (*custom)["rocksdbSstBytes"] = IntProperty("rocksdb.total-sst-files-size");
  }

 private:
  static constexpr size_t kApplyChunkBytes = size_t{4} << 20;
  // Buffered writes are applied past this size. The buffer and its index live outside the
  // memory budget, and one write may take the memtables this far past the write buffer
  // manager's limit (it stalls before a write, not within one): 1 MiB keeps both small while
  // making the per-write cost negligible (thousands of keys per write).
  static constexpr size_t kMaxPendingBytes = size_t{1} << 20;

  // Bloom filter of the buffered keys (2 probes from one hash; 64 KiB per partition, allocated
  // at the first write). A MiB of small writes (~40K keys) sets ~15% of the 2^19 bits: a false
  // positive, which only costs an early flush, is ~2% of the reads of keys not buffered.
  static constexpr size_t kFilterBits = size_t{1} << 19;
  static std::pair<size_t, size_t> FilterProbes(std::string_view key) {
    const uint64_t h = std::hash<std::string_view>()(key) * 0x9E3779B97F4A7C15ULL;
    return {static_cast<size_t>(h & (kFilterBits - 1)),
            static_cast<size_t>((h >> 40) & (kFilterBits - 1))};
  }
  bool MayBePending(std::string_view key) const {
    if (pending_.Count() == 0) return false;
    auto [a, b] = FilterProbes(key);
    return ((pending_filter_[a / 64] >> (a % 64)) & 1) != 0 &&
           ((pending_filter_[b / 64] >> (b % 64)) & 1) != 0;
  }
  Status AfterWrite(std::string_view key) {
    if (pending_filter_.empty()) pending_filter_.assign(kFilterBits / 64, 0);
    auto [a, b] = FilterProbes(key);
    pending_filter_[a / 64] |= uint64_t{1} << (a % 64);
    pending_filter_[b / 64] |= uint64_t{1} << (b % 64);
    if (pending_.GetDataSize() < kMaxPendingBytes) return Status::OK();
    return Flush();
  }

  int64_t IntProperty(const char* name) {
    uint64_t v = 0;
    if (db_ == nullptr || !db_->GetIntProperty(name, &v)) return 0;
    return static_cast<int64_t>(v);
  }
  void Close() {
    if (db_ != nullptr) {
      rocksdb::Status s = db_->Close();
      (void)s;  // a cache directory: nothing to lose
      db_.reset();
    }
  }

  const std::string dir_;
  const RocksDbSettings settings_;
  rocksdb::WriteOptions wo_;
  std::shared_ptr<rocksdb::Cache> cache_;
  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::WriteBatch pending_;           // writes not yet applied to db_ (see the file comment)
  std::vector<uint64_t> pending_filter_;  // Bloom filter of pending_'s keys (allocated on use)
};

}  // namespace

Result<std::unique_ptr<KvBackend>> OpenRocksDbBackend(const std::string& dir,
                                                      const RocksDbSettings& settings) {
  auto backend = std::make_unique<RocksDbBackend>(dir, settings);
  SLUICE_RETURN_NOT_OK(backend->OpenFresh());
  return std::unique_ptr<KvBackend>(std::move(backend));
}

}  // namespace sluice::state
