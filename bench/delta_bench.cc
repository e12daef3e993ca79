// Delta writer benchmarks (src/delta): append throughput against DuckDB's own Parquet writer,
// and the open time of a long table history.
//
//   cmake --build <dir> --target delta_bench && <dir>/bench/delta_bench
//
// Figures are recorded in bench/RESULTS.md ("## Delta tables (src/delta)").
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "bench_check.h"
#include "common/uuid.h"
#include "delta/commit.h"
#include "delta/log_segment.h"
#include "delta/snapshot.h"
#include "delta/table.h"
#include "delta/table_writer.h"
#include "delta/write_util.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::delta {
namespace {

using bench::Check;

std::string TempRoot(const std::string& name) {
  std::string dir =
      (std::filesystem::temp_directory_path() / ("sluice-delta-bench-" + name)).string();
  return dir;
}

// 1M rows x 10 columns of common types.
constexpr int64_t kRows = 1000000;
std::string TenColumnsSql(int64_t rows) {
  return "SELECT i AS id, i * 0.5 AS price, 'user_' || (i % 1000) AS name, "
         "TIMESTAMPTZ '2024-01-01 00:00:00+00' + INTERVAL (i) SECOND AS ts, (i % 7)::INTEGER AS "
         "kind, "
         "DATE '2024-01-01' + (i % 365)::INTEGER AS day, (i % 10000 / 100)::DECIMAL(10,2) AS "
         "amount, "
         "i % 2 = 0 AS flag, (i % 100)::SMALLINT AS bucket, 'item-' || (i * 7919 % 100003) AS item "
         "FROM range(" +
         std::to_string(rows) + ") t(i)";
}

struct Env {
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<engine::Connection> conn;
  engine::Batch rows;
  Env() {
    engine = Check(engine::Engine::Open(), "open");  // threads = 1, the micro-batch setting
    conn = Check(engine->Connect(), "connect");
    rows = Check(conn->Query(TenColumnsSql(kRows)), "rows");
    Check(conn->RegisterBatch("bench_rows", rows), "register");
  }
};

// Baseline: DuckDB's COPY ... TO parquet (snappy) of the same rows.
void BM_DuckDbCopyToParquet(benchmark::State& state) {
  Env env;
  std::string dir = TempRoot("copy");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  int n = 0;
  for (auto _ : state) {
    std::string path = dir + "/f" + std::to_string(n++) + ".parquet";
    Check(env.conn->Execute("COPY bench_rows TO '" + path +
                            "' (FORMAT parquet, COMPRESSION 'snappy')"),
          "copy");
  }
  state.SetItemsProcessed(state.iterations() * kRows);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_DuckDbCopyToParquet)->Unit(benchmark::kMillisecond)->UseRealTime();

// A Delta append of the same rows: data file + stats + commit (fsync on).
void BM_DeltaAppend(benchmark::State& state) {
  Env env;
  std::string dir = TempRoot("append");
  std::filesystem::remove_all(dir);
  auto writer =
      Check(DeltaTableWriter::Open(fs::LocalFileSystem(), env.engine.get(), dir), "writer");
  for (auto _ : state) Check(writer->Write(env.rows).status(), "append");
  state.SetItemsProcessed(state.iterations() * kRows);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_DeltaAppend)->Unit(benchmark::kMillisecond)->UseRealTime();

// Both, alternating in one loop so that machine load hits them alike; reports the ratio of
// Delta append throughput to COPY throughput (goal >= 0.8).
void BM_AppendToCopyRatio(benchmark::State& state) {
  Env env;
  std::string dir = TempRoot("ratio");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/copy");
  auto writer = Check(
      DeltaTableWriter::Open(fs::LocalFileSystem(), env.engine.get(), dir + "/table"), "writer");
  double copy_s = 0, delta_s = 0;
  int n = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    Check(env.conn->Execute("COPY bench_rows TO '" + dir + "/copy/f" + std::to_string(n++) +
                            ".parquet' (FORMAT parquet, COMPRESSION 'snappy')"),
          "copy");
    auto t1 = std::chrono::steady_clock::now();
    Check(writer->Write(env.rows).status(), "append");
    auto t2 = std::chrono::steady_clock::now();
    copy_s += std::chrono::duration<double>(t1 - t0).count();
    delta_s += std::chrono::duration<double>(t2 - t1).count();
  }
  double iters = static_cast<double>(state.iterations());
  state.counters["copy_rows_per_s"] = kRows * iters / copy_s;
  state.counters["delta_rows_per_s"] = kRows * iters / delta_s;
  state.counters["ratio"] = copy_s / delta_s;
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_AppendToCopyRatio)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);

// A table with 10,000 commits (one add each, as a streaming sink makes them) and checkpoints.
// Built once and kept in the temp directory (the build itself takes a while).
constexpr int kCommits = 10000;
std::string HistoryTable(engine::Engine* engine, int64_t checkpoint_interval) {
  std::string dir =
      TempRoot("history-" + std::to_string(kCommits) + "-" + std::to_string(checkpoint_interval));
  if (std::filesystem::exists(dir + "/_COMPLETE")) return dir;
  std::filesystem::remove_all(dir);
  TableWriterOptions options;
  options.commit.sync = false;
  auto writer =
      Check(DeltaTableWriter::Open(fs::LocalFileSystem(), engine, dir, options), "writer");
  auto conn = Check(engine->Connect(), "connect");
  WriteOptions create;
  create.configuration = {{"delta.checkpointInterval", std::to_string(checkpoint_interval)}};
  Check(writer->Write(Check(conn->Query("SELECT 0::BIGINT AS id, 'a' AS s"), "rows"), create)
            .status(),
        "create");
  // Each further commit adds one (small, empty-bodied) file entry with stats and a txn, through
  // the real commit and checkpoint path; the data files themselves are not needed to open.
  for (int v = 1; v < kCommits; ++v) {
    auto txn = Check(writer->StartTransaction(), "txn");
    AddFile add;
    add.path = DataFileName(0, NewUuidV4());
    add.size = 1000;
    add.modification_time = NowMillis();
    add.stats = "{\"numRecords\":10,\"minValues\":{\"id\":" + std::to_string(v * 10) +
                ",\"s\":\"a\"},\"maxValues\":{\"id\":" + std::to_string(v * 10 + 9) +
                ",\"s\":\"z\"},\"nullCount\":{\"id\":0,\"s\":0}}";
    txn->Add(add);
    txn->Add(SetTransaction{"stream", v, NowMillis()});
    txn->SetOperation("STREAMING UPDATE");
    Check(writer->Commit(txn.get()).status(), "commit");
  }
  std::filesystem::create_directories(dir);
  std::FILE* f = std::fopen((dir + "/_COMPLETE").c_str(), "w");
  if (f) std::fclose(f);
  return dir;
}

void BM_OpenTable10kCommits(benchmark::State& state) {
  auto engine = Check(engine::Engine::Open(), "open");
  std::string dir = HistoryTable(engine.get(), state.range(0));
  for (auto _ : state) {
    auto table = Check(DeltaTable::Open(fs::LocalFileSystem(), engine.get(), dir), "open table");
    auto snap = Check(table->Latest(), "latest");
    benchmark::DoNotOptimize(snap->files.size());
    if (snap->version.value() != kCommits - 1 ||
        snap->files.size() != static_cast<size_t>(kCommits)) {
      std::fprintf(stderr, "unexpected table state: version %lld, %zu files\n",
                   static_cast<long long>(snap->version.value()), snap->files.size());
      std::abort();
    }
  }
}
BENCHMARK(BM_OpenTable10kCommits)->Arg(10)->Arg(100)->Unit(benchmark::kMillisecond)->UseRealTime();

// Where the open time goes, on the 10,000-commit table (interval 10, 10,000 adds):
// - BM_ListLog10kCommits: listing _delta_log (11,000 entries with their sizes and times);
// - BM_CheckpointToJsonQuery: the previous reader's query (to_json of every checkpoint row),
//   kept for comparison with the bulk reader;
// - BM_CheckpointReadActions: ReadCheckpointActions, the bulk reader (checkpoint_reader.cc).
void BM_ListLog10kCommits(benchmark::State& state) {
  auto engine = Check(engine::Engine::Open(), "open");
  std::string dir = HistoryTable(engine.get(), 10);
  for (auto _ : state) {
    auto listing = Check(ListLog(fs::LocalFileSystem().get(), dir), "list");
    benchmark::DoNotOptimize(listing.commits.size());
  }
}
BENCHMARK(BM_ListLog10kCommits)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CheckpointToJsonQuery(benchmark::State& state) {
  auto engine = Check(engine::Engine::Open(), "open");
  auto conn = Check(engine->Connect(), "connect");
  std::string dir = HistoryTable(engine.get(), 10);
  auto listing = Check(ListLog(fs::LocalFileSystem().get(), dir), "list");
  const Checkpoint& cp = listing.checkpoints.rbegin()->second;
  for (auto _ : state) {
    auto rows = Check(conn->Query("SELECT CAST(to_json(t) AS VARCHAR) FROM read_parquet('" +
                                  cp.files.front().info.path + "') t"),
                      "query");
    benchmark::DoNotOptimize(rows.num_rows());
  }
}
BENCHMARK(BM_CheckpointToJsonQuery)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CheckpointReadActions(benchmark::State& state) {
  auto engine = Check(engine::Engine::Open(), "open");
  auto conn = Check(engine->Connect(), "connect");
  std::string dir = HistoryTable(engine.get(), 10);
  auto listing = Check(ListLog(fs::LocalFileSystem().get(), dir), "list");
  const Checkpoint& cp = listing.checkpoints.rbegin()->second;
  for (auto _ : state) {
    auto actions =
        Check(ReadCheckpointActions(fs::LocalFileSystem().get(), conn.get(), cp), "read");
    if (actions.size() < static_cast<size_t>(kCommits) - 100) {
      std::fprintf(stderr, "checkpoint gave %zu actions\n", actions.size());
      std::abort();
    }
    benchmark::DoNotOptimize(actions.size());
  }
}
BENCHMARK(BM_CheckpointReadActions)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sluice::delta

BENCHMARK_MAIN();
