// Many tasks appending into one Delta table (issue 20 §2, docs/scale-out.md "Limits"): the
// commit latency and the conflict retries when 1, 2, 4 and 8 tasks of a group each commit their
// own batches to the same table, as the tasks of `sluice run --group` do (each its own writer
// and its own txn appId "<query>-task-<i>", version = its batch id).
//
//   cmake --build <dir> --target group_commit_bench
//   <dir>/bench/group_commit_bench [--tasks 1,2,4,8] [--commits 20] [--rows 100]
//                                  [--interval-ms 1000] [--dir DIR] [--sync]
//
// For each task count T: a fresh table DIR/t<T> (id BIGINT, task INT, s VARCHAR) created by one
// commit, then T threads, each with its own DeltaTableWriter on one shared engine, each making
// --commits blind appends of --rows rows, one every --interval-ms (0: back to back, the worst
// case), starting together. Each commit is timed (the whole Write: Parquet file + log commit)
// and its attempts counted (WriteResult::attempts, 1 = no lost race). At the end the table must
// hold T * commits * rows rows and T * commits commits after the create, or the bench fails.
// DIR defaults to /dev/shm/sluice-group-commit-bench (tmpfs; --sync turns fsync on). DIR may be
// s3://bucket/prefix (the S3 file system of docs/s3.md, e.g. moto's through
// test/interop/s3/with_moto.sh): the tables are then DIR/t<T>-<ms since the epoch>, new each run.
//
// One line per T: tasks, commits, commits that lost a race (and %), retries per commit, commit
// latency p50 / p90 / max ms, and commits/s over the run. Figures are recorded in
// bench/RESULTS.md ("## Many tasks committing into one table").
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench_check.h"
#include "bench_percentile.h"
#include "delta/table.h"
#include "delta/table_writer.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice {
namespace {

using bench::Check;
using bench::Seconds;

using bench::Percentile;

struct Options {
  std::vector<int> tasks = {1, 2, 4, 8};
  int commits = 20;
  int rows = 100;
  int interval_ms = 1000;
  std::string dir = "/dev/shm/sluice-group-commit-bench";
  bool sync = false;
};

bool IsS3(const std::string& path) { return path.rfind("s3://", 0) == 0; }

void RunOne(const Options& o, int tasks) {
  auto fs = Check(fs::FileSystemForPath(o.dir), "file system");
  std::string root = o.dir + "/t" + std::to_string(tasks);
  if (IsS3(o.dir)) {
    root += "-" + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  } else {
    std::filesystem::remove_all(root);
  }
  auto engine = Check(engine::Engine::Open(), "engine");
  delta::TableWriterOptions writer_options;
  writer_options.commit.sync = o.sync;
  {
    auto conn = Check(engine->Connect(), "connect");
    auto schema_rows = Check(
        conn->Query("SELECT 0::BIGINT AS id, 0::INTEGER AS task, 's' AS s WHERE false"), "rows");
    auto writer =
        Check(delta::DeltaTableWriter::Open(fs, engine.get(), root, writer_options), "writer");
    Check(writer->CreateTable(schema_rows.schema(), {}), "create");
  }
  std::mutex mu;
  std::vector<double> latencies_ms;
  int64_t lost = 0, retries = 0;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < tasks; ++t) {
    threads.emplace_back([&, t]() {
      auto conn = Check(engine->Connect(), "connect");
      auto writer =
          Check(delta::DeltaTableWriter::Open(fs, engine.get(), root, writer_options), "writer");
      ++ready;
      while (!go) std::this_thread::yield();
      const auto start = std::chrono::steady_clock::now();
      for (int c = 0; c < o.commits; ++c) {
        const int64_t first = (static_cast<int64_t>(t) * o.commits + c) * o.rows;
        auto rows =
            Check(conn->Query("SELECT (" + std::to_string(first) + " + i)::BIGINT AS id, " +
                              std::to_string(t) + "::INTEGER AS task, 'x' AS s FROM range(" +
                              std::to_string(o.rows) + ") AS r(i)"),
                  "rows");
        delta::WriteOptions w;
        w.txn_app_id = "bench-task-" + std::to_string(t);
        w.txn_version = c;
        w.operation = "STREAMING UPDATE";
        const auto t0 = std::chrono::steady_clock::now();
        delta::WriteResult r = Check(writer->Write(rows, w), "write");
        const double ms = 1e3 * Seconds(t0);
        {
          std::lock_guard<std::mutex> lock(mu);
          latencies_ms.push_back(ms);
          if (r.attempts > 1) ++lost;
          retries += std::max(0, r.attempts - 1);
        }
        if (o.interval_ms > 0) {
          std::this_thread::sleep_until(start + std::chrono::milliseconds(o.interval_ms) * (c + 1));
        }
      }
    });
  }
  while (ready < tasks) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto run_start = std::chrono::steady_clock::now();
  go = true;
  for (auto& th : threads) th.join();
  const double run_s = Seconds(run_start);

  // Every task's every commit is in the table once.
  auto table = Check(delta::DeltaTable::Open(fs, engine.get(), root), "open");
  auto snapshot = Check(table->Latest(), "snapshot");
  const int64_t want_commits = static_cast<int64_t>(tasks) * o.commits;
  if (snapshot->version.value() != want_commits) {
    std::fprintf(stderr, "t%d: table at version %lld, want %lld\n", tasks,
                 static_cast<long long>(snapshot->version.value()),
                 static_cast<long long>(want_commits));
    std::exit(1);
  }
  auto conn = Check(engine->Connect(), "connect");
  auto scan = Check(table->ScanSql(*snapshot), "scan");
  auto counted =
      Check(conn->Query("SELECT count(*), count(DISTINCT id) FROM (" + scan + ")"), "count");
  const int64_t want_rows = want_commits * o.rows;
  const int64_t n = Check(counted.GetInt64(0, 0), "n").value_or(-1);
  const int64_t d = Check(counted.GetInt64(0, 1), "d").value_or(-1);
  if (n != want_rows || d != want_rows) {
    std::fprintf(stderr, "t%d: %lld rows, %lld distinct, want %lld\n", tasks,
                 static_cast<long long>(n), static_cast<long long>(d),
                 static_cast<long long>(want_rows));
    std::exit(1);
  }
  std::printf(
      "tasks %d  commits %lld  lost a race %lld (%.1f%%)  retries/commit %.2f  latency ms p50 "
      "%.1f p90 %.1f max %.1f  commits/s %.1f\n",
      tasks, static_cast<long long>(want_commits), static_cast<long long>(lost),
      100.0 * static_cast<double>(lost) / static_cast<double>(want_commits),
      static_cast<double>(retries) / static_cast<double>(want_commits),
      Percentile(latencies_ms, 0.5), Percentile(latencies_ms, 0.9), Percentile(latencies_ms, 1.0),
      static_cast<double>(want_commits) / run_s);
  std::fflush(stdout);
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  sluice::Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return sluice::bench::FlagValue(argc, argv, &i); };
    if (a == "--tasks") {
      o.tasks = sluice::bench::Ints(next());
    } else if (a == "--commits") {
      o.commits = std::stoi(next());
    } else if (a == "--rows") {
      o.rows = std::stoi(next());
    } else if (a == "--interval-ms") {
      o.interval_ms = std::stoi(next());
    } else if (a == "--dir") {
      o.dir = next();
    } else if (a == "--sync") {
      o.sync = true;
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (!sluice::IsS3(o.dir)) std::filesystem::create_directories(o.dir);
  for (int t : o.tasks) sluice::RunOne(o, t);
  return 0;
}
