// State partitions: which partition a key belongs to, and all partitions of one operator opened,
// run and committed together (in parallel threads).
//
// The number of partitions of an operator is fixed when its checkpoint is created (it is written
// to state/<opId>/_metadata/metadata) because a key's partition depends on it. The key-to-partition
// function below is part of the checkpoint format: it must never change.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/status.h"
#include "state/operator_metadata.h"
#include "state/state_store.h"

namespace sluice::state {

// MurmurHash3 x86_32 of `bytes` (Spark's hash function family; seed 42 as Spark's
// HashPartitioning). Stable across platforms and releases.
int32_t Murmur3Hash32(std::string_view bytes, uint32_t seed = 42);
// Spark's Pmod(hash, n): a partition in [0, n). Requires n >= 1.
int32_t PartitionForHash(int32_t hash, int32_t num_partitions);
// PartitionForHash(Murmur3Hash32(encoded_key), n): the partition of an operator's encoded key.
int32_t PartitionForKey(std::string_view encoded_key, int32_t num_partitions);

struct OperatorStateOptions {
  std::string checkpoint_root;
  int64_t operator_id = 0;
  std::string operator_name;  // e.g. "stateStoreSave"; checked against the metadata
  std::string store_name = "default";
  // Partitions of this operator. The first run writes it to the metadata; later runs must pass
  // the same number (the stream layer restores it from the offset log's persisted conf).
  int32_t num_partitions = 0;
  StateSchema schema;  // checked against the stored schema on restart
  // RocksDB working directories: <local_root>/<operator_id>/<partition>[/<store_name>].
  std::string local_root;
  // Template for every partition's provider (local_dir is derived from local_root).
  StateStoreOptions store;
  // > 0: one RocksDB block cache + write buffer manager of this size shared by all partitions
  // (overrides store.rocksdb's per-instance sizes), so that the operator's memory stays bounded
  // whatever the number of partitions. 0: per-instance sizes. Default 256 MiB.
  int64_t memory_budget_bytes = int64_t{256} << 20;
};

// All partitions of one operator's state store.
// Thread safety: RunBatch uses the partitions from several threads internally; the object itself
// is used by one thread at a time.
class OperatorStateStores {
 public:
  // Writes or checks the operator metadata and state schema, then opens every partition's
  // provider. Errors: InvalidArgument for a query that does not match the checkpoint (operator
  // name, partitions, schema), I/O and Corruption errors of the metadata files.
  static Result<std::unique_ptr<OperatorStateStores>> Open(OperatorStateOptions options);

  int32_t num_partitions() const { return static_cast<int32_t>(providers_.size()); }
  // 0 <= p < num_partitions().
  StateStoreProvider& partition(int32_t p) { return *providers_[static_cast<size_t>(p)]; }

  // One batch over every partition: loads `version`, calls fn(partition, store) and commits,
  // with up to `parallelism` partitions at a time on their own threads. Returns version + 1.
  // When fn or a commit fails for some partitions the others still finish; the first error (by
  // partition) is returned with the partition named. Partitions that committed then hold
  // version + 1 while others do not: harmless, because the query has not committed the batch,
  // and its re-run loads `version` again and rewrites version + 1 everywhere.
  // `fn` must be safe to call concurrently for different partitions.
  Result<int64_t> RunBatch(int64_t version, const std::function<Status(int32_t, StateStore&)>& fn,
                           int parallelism);

  // Maintenance() of every partition.
  Status Maintenance();

  // Sums over partitions of their LastMetrics(), as Spark sums task metrics (commit_time_ms
  // included; num_keys is -1 when any partition's is); snapshotLagVersions, loadedFromSnapshot and
  // rocksdbBlockCacheUsageBytes (a cache may be shared) are the maximum instead.
  StateStoreMetrics LastMetrics() const;

  const std::shared_ptr<RocksDbMemoryBudget>& memory_budget() const { return budget_; }

 private:
  OperatorStateStores() = default;
  std::vector<std::unique_ptr<StateStoreProvider>> providers_;
  std::shared_ptr<RocksDbMemoryBudget> budget_;
};

}  // namespace sluice::state
