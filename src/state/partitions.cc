#include "state/partitions.h"

#include <atomic>
#include <cstring>
#include <thread>

#include "fs/file_system.h"

namespace sluice::state {
namespace {

uint32_t Rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

uint32_t Fmix(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6b;
  h ^= h >> 13;
  h *= 0xc2b2ae35;
  h ^= h >> 16;
  return h;
}

}  // namespace

int32_t Murmur3Hash32(std::string_view bytes, uint32_t seed) {
  constexpr uint32_t c1 = 0xcc9e2d51;
  constexpr uint32_t c2 = 0x1b873593;
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t len = bytes.size();
  const size_t nblocks = len / 4;
  uint32_t h = seed;
  for (size_t i = 0; i < nblocks; ++i) {
    uint32_t k = uint32_t{data[4 * i]} | (uint32_t{data[4 * i + 1]} << 8) |
                 (uint32_t{data[4 * i + 2]} << 16) | (uint32_t{data[4 * i + 3]} << 24);
    k *= c1;
    k = Rotl(k, 15);
    k *= c2;
    h ^= k;
    h = Rotl(h, 13);
    h = h * 5 + 0xe6546b64;
  }
  const unsigned char* tail = data + nblocks * 4;
  uint32_t k = 0;
  switch (len & 3) {
    case 3:
      k ^= uint32_t{tail[2]} << 16;
      [[fallthrough]];
    case 2:
      k ^= uint32_t{tail[1]} << 8;
      [[fallthrough]];
    case 1:
      k ^= tail[0];
      k *= c1;
      k = Rotl(k, 15);
      k *= c2;
      h ^= k;
  }
  h ^= static_cast<uint32_t>(len);
  return static_cast<int32_t>(Fmix(h));
}

int32_t PartitionForHash(int32_t hash, int32_t num_partitions) {
  const int32_t r = hash % num_partitions;
  return r < 0 ? r + num_partitions : r;
}

int32_t PartitionForKey(std::string_view encoded_key, int32_t num_partitions) {
  return PartitionForHash(Murmur3Hash32(encoded_key), num_partitions);
}

Result<std::unique_ptr<OperatorStateStores>> OperatorStateStores::Open(
    OperatorStateOptions options) {
  if (options.num_partitions < 1) {
    return Status::InvalidArgument("operator " + std::to_string(options.operator_id) +
                                   ": the number of state partitions must be >= 1");
  }
  std::shared_ptr<fs::FileSystem> fs =
      options.store.fs != nullptr ? options.store.fs : fs::LocalFileSystem();
  OperatorMetadata meta;
  meta.operator_id = options.operator_id;
  meta.operator_name = options.operator_name;
  meta.stores.push_back({options.store_name, 0, options.num_partitions});
  SLUICE_ASSIGN_OR_RETURN(OperatorMetadata stored,
                          WriteOrCheckOperatorMetadata(*fs, options.checkpoint_root, meta));
  (void)stored;
  SLUICE_RETURN_NOT_OK(WriteOrCheckStateSchema(*fs, options.checkpoint_root, options.operator_id,
                                               options.operator_name, options.store_name,
                                               options.schema));
  std::unique_ptr<OperatorStateStores> out(new OperatorStateStores());
  if (options.memory_budget_bytes > 0 && options.store.kind == StateStoreProviderKind::kRocksDb) {
    SLUICE_ASSIGN_OR_RETURN(out->budget_, RocksDbMemoryBudget::Create(options.memory_budget_bytes));
  }
  for (int32_t p = 0; p < options.num_partitions; ++p) {
    StateStoreId id{options.checkpoint_root, options.operator_id, p, options.store_name};
    StateStoreOptions so = options.store;
    so.fs = fs;
    if (so.kind == StateStoreProviderKind::kRocksDb) {
      std::string dir = fs::JoinPath(
          fs::JoinPath(options.local_root, std::to_string(options.operator_id)), std::to_string(p));
      if (options.store_name != "default") dir = fs::JoinPath(dir, options.store_name);
      so.local_dir = dir;
      if (out->budget_) so.rocksdb.shared_budget = out->budget_;
    }
    SLUICE_ASSIGN_OR_RETURN(auto provider, StateStoreProvider::Open(std::move(id), std::move(so)));
    out->providers_.push_back(std::move(provider));
  }
  return out;
}

Result<int64_t> OperatorStateStores::RunBatch(int64_t version,
                                              const std::function<Status(int32_t, StateStore&)>& fn,
                                              int parallelism) {
  const int32_t n = num_partitions();
  std::vector<Status> results(static_cast<size_t>(n));
  std::atomic<int32_t> next{0};
  auto run_one = [&](int32_t p) -> Status {
    SLUICE_ASSIGN_OR_RETURN(auto store, providers_[static_cast<size_t>(p)]->GetStore(version));
    SLUICE_RETURN_NOT_OK(fn(p, *store));  // the store's destructor aborts on error
    SLUICE_ASSIGN_OR_RETURN(int64_t committed, store->Commit());
    if (committed != version + 1) return Status::Internal("unexpected committed version");
    return Status::OK();
  };
  auto worker = [&]() {
    for (int32_t p = next.fetch_add(1); p < n; p = next.fetch_add(1)) {
      results[static_cast<size_t>(p)] = run_one(p);
    }
  };
  const int threads = std::max(1, std::min(parallelism, static_cast<int>(n)));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  for (int32_t p = 0; p < n; ++p) {
    if (!results[static_cast<size_t>(p)].ok()) {
      return results[static_cast<size_t>(p)].WithContext("state partition " + std::to_string(p));
    }
  }
  return version + 1;
}

Status OperatorStateStores::Maintenance() {
  for (auto& p : providers_) SLUICE_RETURN_NOT_OK(p->Maintenance());
  return Status::OK();
}

StateStoreMetrics OperatorStateStores::LastMetrics() const {
  StateStoreMetrics sum;
  for (const auto& p : providers_) {
    StateStoreMetrics m = p->LastMetrics();
    // -1 (unknown: a detached store's caller counts) when any partition's is.
    sum.num_keys = sum.num_keys < 0 || m.num_keys < 0 ? -1 : sum.num_keys + m.num_keys;
    sum.memory_used_bytes += m.memory_used_bytes;
    sum.num_updated += m.num_updated;
    sum.num_removed += m.num_removed;
    sum.commit_time_ms += m.commit_time_ms;  // summed over tasks, as Spark's SQL metric
    for (const auto& [k, v] : m.custom) {
      if (k == "snapshotLagVersions" || k == "loadedFromSnapshot" ||
          k == "rocksdbBlockCacheUsageBytes") {
        sum.custom[k] = std::max(sum.custom[k], v);  // a shared cache must not count N times
      } else {
        sum.custom[k] += v;
      }
    }
  }
  return sum;
}

}  // namespace sluice::state
