// Commit fairness under contending writers (issue 24, finding 10): W writers, separate processes
// (or threads of one process), each make --commits blind appends to one Delta table back to back
// through delta::Transaction, each from its own last snapshot (as a writer keeps going without
// re-reading the log), so that every commit races the others. Only the log is measured: an
// append adds one AddFile naming a file that is not written (the data files' cost is
// group_commit_bench's subject).
//
//   cmake --build <dir> --target commit_race_bench
//   <dir>/bench/commit_race_bench [--writers 8] [--commits 200] [--threads] [--dir DIR] [--sync]
//
// Per commit: its attempts (CommitResult::attempts, 1 = no lost race) and its wait (the time
// Commit took). One line: writers, commits, commits that lost a race, lost races in all, the
// most races one commit lost, wait p50 / p99 / max ms, and the run's commits/s. The table must
// end at version W * commits with every file once, or the bench fails. DIR defaults to
// /dev/shm/sluice-commit-race-bench (tmpfs; --sync turns fsync on). Figures in bench/RESULTS.md
// ("## Commit fairness under contending writers").
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench_check.h"
#include "bench_percentile.h"
#include "delta/commit.h"
#include "fs/file_system.h"

namespace sluice {
namespace {

using bench::Check;
using bench::Seconds;

struct Options {
  int writers = 8;
  int commits = 200;
  bool threads = false;
  bool sync = false;
  std::string dir = "/dev/shm/sluice-commit-race-bench";
};

struct Sample {
  int attempts = 0;
  double wait_ms = 0;
};

std::shared_ptr<const delta::Snapshot> CreateTable(const Options& o, const std::string& root) {
  delta::CommitOptions co;
  co.sync = o.sync;
  delta::Transaction create(fs::LocalFileSystem(), root, nullptr, co);
  create.Add(delta::Protocol{});
  delta::Metadata m;
  m.id = "commit-race-bench";
  m.schema_string =
      R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]})";
  m.created_time = 0;
  create.Add(m);
  create.SetOperation("CREATE TABLE");
  auto r = Check(create.Commit(), "create");
  if (!r.snapshot) {
    std::fprintf(stderr, "create: no snapshot after the commit\n");
    std::exit(1);
  }
  return r.snapshot;
}

// One writer's commits, from `snap` on.
std::vector<Sample> Write(const Options& o, const std::string& root,
                          std::shared_ptr<const delta::Snapshot> snap, int writer) {
  delta::CommitOptions co;
  co.sync = o.sync;
  std::vector<Sample> out;
  for (int c = 0; c < o.commits; ++c) {
    delta::Transaction txn(fs::LocalFileSystem(), root, snap, co);
    delta::AddFile a;
    a.path = "w" + std::to_string(writer) + "-c" + std::to_string(c) + ".parquet";
    a.size = 1;
    a.data_change = true;
    txn.Add(a);
    txn.SetOperation("WRITE");
    const auto t0 = std::chrono::steady_clock::now();
    auto r = Check(txn.Commit(), "commit");
    const double ms = 1e3 * Seconds(t0);
    out.push_back({r.attempts, ms});
    if (!r.snapshot) {
      std::fprintf(stderr, "commit: no snapshot after the commit\n");
      std::exit(1);
    }
    snap = r.snapshot;
  }
  return out;
}

using bench::Percentile;

int Run(const Options& o) {
  const std::string root = o.dir + "/t";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  auto snap = CreateTable(o, root);
  std::vector<Sample> all;
  const auto start = std::chrono::steady_clock::now();
  if (o.threads) {
    std::mutex mu;
    std::vector<std::thread> threads;
    for (int w = 0; w < o.writers; ++w) {
      threads.emplace_back([&, w] {
        auto s = Write(o, root, snap, w);
        std::lock_guard<std::mutex> lock(mu);
        all.insert(all.end(), s.begin(), s.end());
      });
    }
    for (auto& t : threads) t.join();
  } else {
    std::vector<std::pair<pid_t, int>> children;  // pid, read end of its pipe
    for (int w = 0; w < o.writers; ++w) {
      int fds[2];
      if (::pipe(fds) != 0) {
        std::perror("pipe");
        return 1;
      }
      pid_t pid = ::fork();
      if (pid < 0) {
        std::perror("fork");
        return 1;
      }
      if (pid == 0) {
        ::close(fds[0]);
        auto s = Write(o, root, snap, w);
        FILE* f = ::fdopen(fds[1], "w");
        for (const Sample& x : s) std::fprintf(f, "%d %.3f\n", x.attempts, x.wait_ms);
        std::fclose(f);
        ::_exit(0);
      }
      ::close(fds[1]);
      children.emplace_back(pid, fds[0]);
    }
    for (auto [pid, fd] : children) {
      FILE* f = ::fdopen(fd, "r");
      Sample x;
      while (std::fscanf(f, "%d %lf", &x.attempts, &x.wait_ms) == 2) all.push_back(x);
      std::fclose(f);
      int status = 0;
      ::waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "writer process %d failed\n", static_cast<int>(pid));
        return 1;
      }
    }
  }
  const double seconds = Seconds(start);
  const int64_t want = static_cast<int64_t>(o.writers) * o.commits;
  // The log must hold every append once, at versions 1 .. want.
  std::set<std::string> paths;
  for (int64_t v = 1; v <= want; ++v) {
    auto text = fs::LocalFileSystem()->ReadFile(delta::CommitPath(root, Version(v)));
    if (!text.ok()) {
      std::fprintf(stderr, "version %lld: %s\n", static_cast<long long>(v),
                   text.status().ToString().c_str());
      return 1;
    }
    const size_t at = text->find("\"path\":\"");
    if (at == std::string::npos) {
      std::fprintf(stderr, "version %lld holds no add\n", static_cast<long long>(v));
      return 1;
    }
    paths.insert(text->substr(at, text->find('"', at + 8) - at));
  }
  if (static_cast<int64_t>(all.size()) != want || static_cast<int64_t>(paths.size()) != want ||
      fs::LocalFileSystem()->Exists(delta::CommitPath(root, Version(want + 1))).ValueOr(true)) {
    std::fprintf(stderr, "%zu commits timed, %zu distinct adds in the log, want %lld\n", all.size(),
                 paths.size(), static_cast<long long>(want));
    return 1;
  }
  int64_t lost_commits = 0, lost_races = 0;
  int worst = 0;
  std::vector<double> waits;
  for (const Sample& x : all) {
    if (x.attempts > 1) ++lost_commits;
    lost_races += x.attempts - 1;
    worst = std::max(worst, x.attempts - 1);
    waits.push_back(x.wait_ms);
  }
  std::printf(
      "writers %d (%s)  commits %lld  lost a race %lld (%.1f%%)  lost races %lld  most lost by one "
      "commit %d  wait ms p50 %.1f p99 %.1f max %.1f  commits/s %.1f\n",
      o.writers, o.threads ? "threads" : "processes", static_cast<long long>(want),
      static_cast<long long>(lost_commits),
      100.0 * static_cast<double>(lost_commits) / static_cast<double>(want),
      static_cast<long long>(lost_races), worst, Percentile(waits, 0.5), Percentile(waits, 0.99),
      Percentile(waits, 1.0), static_cast<double>(want) / seconds);
  std::filesystem::remove_all(root);
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  sluice::Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return sluice::bench::FlagValue(argc, argv, &i); };
    if (a == "--writers") {
      o.writers = std::stoi(value());
    } else if (a == "--commits") {
      o.commits = std::stoi(value());
    } else if (a == "--threads") {
      o.threads = true;
    } else if (a == "--sync") {
      o.sync = true;
    } else if (a == "--dir") {
      o.dir = value();
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (o.writers < 1 || o.commits < 1) {
    std::fprintf(stderr, "--writers and --commits must be >= 1\n");
    return 2;
  }
  return sluice::Run(o);
}
