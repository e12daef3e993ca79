// State store benchmarks (src/state): the cost of one micro-batch's state commit with 100K
// changed keys, and get/put throughput. Figures go to bench/RESULTS.md.
//
//   build/release/bench/state_bench --benchmark_counters_tabular=true
//
// Argument 0 of each benchmark: 0 = RocksDB provider, 1 = in-memory provider.
// Argument 1 (commit benchmarks): 1 = fsync the checkpoint files (the default), 0 = no fsync.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include "fs/test_util.h"
#include "state/state_store.h"

namespace sluice::state {
namespace {

constexpr int kKeys = 100'000;

std::string Key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%013d", i);  // 16 bytes
  return buf;
}
std::string Value(int i, int64_t version) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "v%015lld-%015d", static_cast<long long>(version), i);  // 32 B
  return buf;
}

struct Fixture {
  fs::ScopedTempDir tmp{"sluice-state-bench"};
  std::unique_ptr<StateStoreProvider> provider;
  int64_t version = 0;

  bool Open(benchmark::State& state, bool sync) {
    StateStoreOptions o;
    o.kind =
        state.range(0) == 0 ? StateStoreProviderKind::kRocksDb : StateStoreProviderKind::kInMemory;
    o.local_dir = tmp.Join("local");
    o.sync = sync;
    auto p = StateStoreProvider::Open({tmp.Join("checkpoint"), 0, 0, "default"}, o);
    if (!p.ok()) {
      state.SkipWithError(p.status().ToString().c_str());
      return false;
    }
    provider = p.MoveValueUnsafe();
    return true;
  }
  // One batch as an aggregation runs it: a read-modify-write (Get, then Put) of every key.
  bool PutAll(benchmark::State& state, StateStore& store) {
    for (int i = 0; i < kKeys; ++i) {
      const std::string key = Key(i);
      auto old = store.Get(key);
      if (!old.ok()) {
        state.SkipWithError(old.status().ToString().c_str());
        return false;
      }
      benchmark::DoNotOptimize(old);
      Status st = store.Put(key, Value(i, version));
      if (!st.ok()) {
        state.SkipWithError(st.ToString().c_str());
        return false;
      }
    }
    return true;
  }
  bool Batch(benchmark::State& state, bool time_only_commit, double* commit_seconds) {
    auto store = provider->GetStore(version);
    if (!store.ok()) {
      state.SkipWithError(store.status().ToString().c_str());
      return false;
    }
    if (time_only_commit) state.PauseTiming();
    if (!PutAll(state, **store)) return false;
    if (time_only_commit) state.ResumeTiming();
    const auto start = std::chrono::steady_clock::now();
    auto v = (*store)->Commit();
    *commit_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!v.ok()) {
      state.SkipWithError(v.status().ToString().c_str());
      return false;
    }
    version = *v;
    return true;
  }
};

// One batch: 100K read-modify-writes (every key changes) + Commit. Every 10th commit also writes a
// snapshot (snapshot_interval = 10), so the mean includes its amortized cost.
void BM_BatchOf100KChangedKeys(benchmark::State& state) {
  Fixture f;
  if (!f.Open(state, state.range(1) != 0)) return;
  double commit_seconds = 0;
  if (!f.Batch(state, false, &commit_seconds)) return;  // load the keys first
  commit_seconds = 0;
  for (auto _ : state) {
    if (!f.Batch(state, false, &commit_seconds)) return;
  }
  state.counters["commit_ms"] = 1000.0 * commit_seconds / static_cast<double>(state.iterations());
  state.counters["rmw_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()) * kKeys,
                                                   benchmark::Counter::kIsRate);
  state.counters["changelog_MB"] =
      static_cast<double>(f.provider->LastMetrics().custom["changelogBytes"]) / 1e6;
}
BENCHMARK(BM_BatchOf100KChangedKeys)
    ->ArgsProduct({{0, 1}, {1, 0}})
    ->ArgNames({"mem", "sync"})
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Only the Commit of a batch with 100K changed keys (changelog encode + write + fsync, and the
// snapshot every 10th version).
void BM_CommitOf100KChangedKeys(benchmark::State& state) {
  Fixture f;
  if (!f.Open(state, state.range(1) != 0)) return;
  double commit_seconds = 0;
  if (!f.Batch(state, false, &commit_seconds)) return;
  for (auto _ : state) {
    if (!f.Batch(state, true, &commit_seconds)) return;
  }
}
BENCHMARK(BM_CommitOf100KChangedKeys)
    ->ArgsProduct({{0, 1}, {1, 0}})
    ->ArgNames({"mem", "sync"})
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Random Gets of existing keys in a committed state of 100K keys.
void BM_Get(benchmark::State& state) {
  Fixture f;
  if (!f.Open(state, false)) return;
  double ignored = 0;
  if (!f.Batch(state, false, &ignored)) return;
  auto store = f.provider->GetStore(f.version);
  if (!store.ok()) return state.SkipWithError(store.status().ToString().c_str());
  std::mt19937 rng(1);
  std::vector<std::string> keys;
  for (int i = 0; i < 4096; ++i) keys.push_back(Key(static_cast<int>(rng() % kKeys)));
  size_t i = 0;
  for (auto _ : state) {
    auto v = (*store)->Get(keys[i++ & 4095]);
    benchmark::DoNotOptimize(v);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Get)->Arg(0)->Arg(1)->ArgName("mem");

// Puts that update existing keys (the exact key count costs one read per Put).
void BM_Put(benchmark::State& state) {
  Fixture f;
  if (!f.Open(state, false)) return;
  double ignored = 0;
  if (!f.Batch(state, false, &ignored)) return;
  auto store = f.provider->GetStore(f.version);
  if (!store.ok()) return state.SkipWithError(store.status().ToString().c_str());
  const std::string value = Value(0, 99);
  int64_t i = 0;
  for (auto _ : state) {
    Status st = (*store)->Put(Key(static_cast<int>(i++ % kKeys)), value);
    if (!st.ok()) return state.SkipWithError(st.ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Put)->Arg(0)->Arg(1)->ArgName("mem");

// Rebuilding version 15 (snapshot 10 + 5 changelogs of 100K keys) on a new machine.
void BM_RecoverFromCheckpoint(benchmark::State& state) {
  Fixture f;
  if (!f.Open(state, false)) return;
  double ignored = 0;
  for (int b = 0; b < 15; ++b) {
    if (!f.Batch(state, false, &ignored)) return;
  }
  int n = 0;
  for (auto _ : state) {
    StateStoreOptions o;
    o.kind =
        state.range(0) == 0 ? StateStoreProviderKind::kRocksDb : StateStoreProviderKind::kInMemory;
    o.local_dir = f.tmp.Join("fresh" + std::to_string(n++));
    auto p = StateStoreProvider::Open({f.tmp.Join("checkpoint"), 0, 0, "default"}, o);
    if (!p.ok()) return state.SkipWithError(p.status().ToString().c_str());
    auto store = (*p)->GetStore(f.version);
    if (!store.ok()) return state.SkipWithError(store.status().ToString().c_str());
  }
}
BENCHMARK(BM_RecoverFromCheckpoint)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("mem")
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace sluice::state

BENCHMARK_MAIN();
