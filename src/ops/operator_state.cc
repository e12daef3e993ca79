#include "ops/operator_state.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <utility>

#include "fs/file_system.h"
#include "ops/operator_conf.h"
#include "ops/state_work_dir.h"

namespace sluice::ops {

Status ParallelForPartitions(int32_t n, int threads, const std::function<Status(int32_t)>& fn) {
  std::vector<Status> results(static_cast<size_t>(n));
  std::atomic<int32_t> next{0};
  auto worker = [&]() {
    for (int32_t i = next++; i < n; i = next++) results[static_cast<size_t>(i)] = fn(i);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<int>(threads, n); ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (int32_t i = 0; i < n; ++i) {
    if (!results[static_cast<size_t>(i)].ok()) {
      return results[static_cast<size_t>(i)].WithContext("partition " + std::to_string(i));
    }
  }
  return Status::OK();
}

Result<std::unique_ptr<OperatorState>> OperatorState::Open(const OperatorContext& context,
                                                           OperatorStateSpec spec) {
  std::unique_ptr<OperatorState> out(new OperatorState());
  state::OperatorStateOptions o;
  o.checkpoint_root = context.checkpoint_root;
  o.operator_id = context.operator_id;
  o.operator_name = std::move(spec.operator_name);
  o.num_partitions = context.num_partitions;
  o.schema = std::move(spec.schema);
  out->in_memory_ = spec.force_in_memory ||
                    StateProviderFromConf(context.conf) == state::StateStoreProviderKind::kInMemory;
  o.store.kind = out->in_memory_ ? state::StateStoreProviderKind::kInMemory
                                 : state::StateStoreProviderKind::kRocksDb;
  o.store.fs = context.fs;
  o.store.track_num_keys = spec.track_num_keys;
  if (!out->in_memory_) {
    SLUICE_ASSIGN_OR_RETURN(out->work_dir_,
                            CreateStateWorkDir(context.checkpoint_root, spec.work_dir_kind));
    o.local_root = out->work_dir_;
  }
  // On failure `out` is destroyed, which removes the working directory just made.
  SLUICE_ASSIGN_OR_RETURN(out->stores_, state::OperatorStateStores::Open(std::move(o)));
  return out;
}

OperatorState::~OperatorState() {
  stores_.reset();
  if (!work_dir_.empty()) {
    Status st = fs::LocalFileSystem()->DeleteRecursive(work_dir_);
    (void)st;  // a cache: the next owner of the checkpoint removes what is left (state_work_dir.h)
  }
}

Result<int64_t> OperatorState::RunBatch(
    int64_t version, const std::function<Status(int32_t, state::StateStore&)>& fn,
    int parallelism) {
  return stores_->RunBatch(version, fn, parallelism);
}

Result<std::vector<state::StateStoreMetrics>> OperatorState::RunBatchOverAll(
    int64_t version, const std::function<Status(const std::vector<state::StateStore*>&)>& work,
    int parallelism) {
  const int32_t n = num_partitions();
  // Destroying a store that is neither committed nor aborted aborts it (state_store.h).
  std::vector<std::unique_ptr<state::StateStore>> owned(static_cast<size_t>(n));
  SLUICE_RETURN_NOT_OK(ParallelForPartitions(n, parallelism, [&](int32_t p) -> Status {
    SLUICE_ASSIGN_OR_RETURN(owned[static_cast<size_t>(p)], stores_->partition(p).GetStore(version));
    return Status::OK();
  }));
  std::vector<state::StateStore*> stores(owned.size());
  for (size_t p = 0; p < owned.size(); ++p) stores[p] = owned[p].get();
  SLUICE_RETURN_NOT_OK(work(stores));
  const auto commit_start = std::chrono::steady_clock::now();
  SLUICE_RETURN_NOT_OK(ParallelForPartitions(n, parallelism, [&](int32_t p) -> Status {
    return owned[static_cast<size_t>(p)]->Commit().status();
  }));
  last_commit_wall_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - commit_start)
                             .count();
  std::vector<state::StateStoreMetrics> metrics;
  metrics.reserve(owned.size());
  for (const auto& s : owned) metrics.push_back(s->Metrics());
  return metrics;
}

}  // namespace sluice::ops
