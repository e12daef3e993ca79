// OperatorState: a stateful operator's state for the lifetime of a query, and the runtime that
// loads and commits it around each batch (docs/operators.md).
//
// Open is the one place that turns an operator's declared state (OperatorStateSpec: its progress
// name, the key and value schema the checkpoint records) and its context into open state stores:
// it chooses the provider from the conf (ops/operator_conf.h: RocksDB unless
// sluice.streaming.stateStore.providerClass names the memory/HDFS provider), makes the RocksDB
// working directory <checkpoint>/_work/<name>-XXXXXX (ops/state_work_dir.h), and opens every
// partition (state::OperatorStateStores::Open: writes or checks the operator metadata and the
// state schema). The destructor closes the stores and removes the working directory.
//
// An operator never loads, commits or aborts a store itself: its per-batch work runs inside
// RunBatch, which loads version N of every partition, hands the stores to the work and commits
// version N + 1 of every partition when the work returns OK; when it fails, every partition not
// yet committed is aborted (a partly committed version is harmless: the query has not committed
// the batch, and its re-run writes N + 1 again).
//
// Errors: Open's are the state layer's (InvalidArgument for a query that does not match the
// checkpoint, I/O, Corruption) and IOError for the working directory; RunBatch's name the
// partition. Thread safety: one thread at a time (the query thread); RunBatch runs the work on
// helper threads as documented per overload.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "ops/stateful_operator.h"
#include "state/partitions.h"
#include "state/state_store.h"

namespace sluice::ops {

// What an operator declares of its state, once its input schema is known.
struct OperatorStateSpec {
  // Spark's operator name ("stateStoreSave", "dedupe", "symmetricHashJoin", ...): checked against
  // the checkpoint's operator metadata on restart.
  std::string operator_name;
  // The key and value fields; checked against the stored schema on restart.
  state::StateSchema schema;
  // The stores count keys exactly (state::StateStoreOptions::track_num_keys). Default true.
  bool track_num_keys = true;
  // Tests: the in-memory provider whatever the conf says.
  bool force_in_memory = false;
  // The working directory's name prefix ("agg-state", "dedup-state", ...).
  std::string work_dir_kind = "state";
};

// Runs fn(0), ..., fn(n - 1) on up to `threads` threads (the calling one included) and returns the
// first error by index, with "partition <i>" as context. Different i may run concurrently.
Status ParallelForPartitions(int32_t n, int threads, const std::function<Status(int32_t)>& fn);

class OperatorState {
 public:
  static Result<std::unique_ptr<OperatorState>> Open(const OperatorContext& context,
                                                     OperatorStateSpec spec);
  ~OperatorState();
  OperatorState(const OperatorState&) = delete;
  OperatorState& operator=(const OperatorState&) = delete;

  int32_t num_partitions() const { return stores_->num_partitions(); }
  bool in_memory() const { return in_memory_; }

  // Per partition on its own thread (up to `parallelism` at a time): load `version`, fn(p, store),
  // commit. Returns version + 1. `fn` must be safe to call concurrently for different partitions.
  Result<int64_t> RunBatch(int64_t version,
                           const std::function<Status(int32_t, state::StateStore&)>& fn,
                           int parallelism);

  // Every partition at once: loads `version` of all (up to `parallelism` at a time), calls
  // work(stores) (stores[p] is partition p's) on the calling thread, then commits all (as many at
  // a time). Returns each partition's store metrics after its commit, by partition.
  Result<std::vector<state::StateStoreMetrics>> RunBatchOverAll(
      int64_t version, const std::function<Status(const std::vector<state::StateStore*>&)>& work,
      int parallelism);

  // Wall time of the last RunBatchOverAll's commits (ms).
  int64_t last_commit_wall_ms() const { return last_commit_wall_ms_; }
  // Sums over partitions of the last batch's store metrics (state::OperatorStateStores).
  state::StateStoreMetrics LastMetrics() const { return stores_->LastMetrics(); }

 private:
  OperatorState() = default;

  std::unique_ptr<state::OperatorStateStores> stores_;
  std::string work_dir_;  // RocksDB only; removed by the destructor
  bool in_memory_ = false;
  int64_t last_commit_wall_ms_ = 0;
};

}  // namespace sluice::ops
