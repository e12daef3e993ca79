// Commit latency of one `sluice sql` session against the size of the table (issue 16, section 3:
// a table of 10,000 commits): plain INSERTs of one row, each its own commit, into tables that
// already hold 100, 1,000 and 10,000 files. Goal: a commit's cost does not grow with the table.
//
//   cmake --build <dir> --target delta_commit_bench
//   <dir>/bench/delta_commit_bench [--files 100,1000,10000] [--commits 50] [--dir DIR]
//
// For each size N it builds a base table DIR/base-N/t (id INT, s STRING,
// delta.checkpointInterval=10): one commit adding N one-row Parquet files (copies of one file
// Sluice wrote, with its stats) and a checkpoint of it, as a long log leaves the table after its
// last checkpoint. It then copies the base to DIR/sluice-N/t and runs --commits INSERT INTO t
// VALUES statements through one sql::Session, timing each statement (every tenth commit also
// writes a checkpoint of all N files, as Delta's protocol asks). The base tables stay in DIR so
// that bench/delta_commit_rs.py can make delta-rs append to the same tables. DIR defaults to
// /dev/shm/sluice-delta-commit-bench (tmpfs: the fsyncs are not what is measured).
//
// One line per size: files, commits, median / mean / p90 / max ms per commit, and the same for
// the commits that wrote a checkpoint. Figures are recorded in bench/RESULTS.md ("## Delta
// commits in one session").
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/uuid.h"
#include "delta/commit.h"
#include "delta/paths.h"
#include "delta/table_writer.h"
#include "engine/engine.h"
#include "fs/file_system.h"
#include "sql/session.h"

namespace sluice {
namespace {

template <typename T>
T Check(Result<T> r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, r.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(r).ValueOrDie();
}

// The base table of `files` one-row files at `root`.
void BuildBase(const std::string& root, int files) {
  namespace sfs = std::filesystem;
  auto fs = fs::LocalFileSystem();
  auto engine = Check(engine::Engine::Open(), "engine");
  auto conn = Check(engine->Connect(), "connect");
  auto writer = Check(delta::DeltaTableWriter::Open(fs, engine.get(), root), "writer");
  auto row = Check(conn->Query("SELECT 0::INTEGER AS id, 's0' AS s"), "row");
  delta::CreateTableOptions create;
  create.configuration["delta.checkpointInterval"] = "10";
  Check(writer->CreateTable(row.schema(), create), "create");
  Check(writer->Write(row), "first file");
  auto snap = Check(writer->Latest(), "latest");
  const delta::AddFile first = snap->files.front();
  const std::string first_path = Check(delta::ResolveLogPath(root, first.path), "path");
  auto txn = Check(writer->StartTransaction(), "transaction");
  for (int i = 1; i < files; ++i) {
    delta::AddFile add = first;
    add.path = "part-00000-" + NewUuidV4() + "-c000.snappy.parquet";
    sfs::copy_file(first_path, sfs::path(root) / add.path);
    txn->Add(add);
  }
  txn->SetOperation("WRITE", {{"mode", "\"Append\""}});
  Check(writer->Commit(txn.get()), "commit");
  Check(writer->Checkpoint(), "checkpoint");
}

struct Summary {
  double median = 0, mean = 0, p90 = 0, max = 0;
  size_t n = 0;
};

Summary Summarize(std::vector<double> ms) {
  Summary s;
  s.n = ms.size();
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  s.median = ms[ms.size() / 2];
  s.p90 = ms[std::min(ms.size() - 1, ms.size() * 9 / 10)];
  s.max = ms.back();
  for (double m : ms) s.mean += m;
  s.mean /= static_cast<double>(ms.size());
  return s;
}

void RunSize(const std::string& dir, int files, int commits) {
  namespace sfs = std::filesystem;
  const std::string base = dir + "/base-" + std::to_string(files) + "/t";
  if (!sfs::exists(base + "/_delta_log")) {
    sfs::remove_all(sfs::path(base).parent_path());
    auto start = std::chrono::steady_clock::now();
    BuildBase(base, files);
    std::fprintf(stderr, "built %s (%d files) in %.1f s\n", base.c_str(), files,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const std::string warehouse = dir + "/sluice-" + std::to_string(files);
  sfs::remove_all(warehouse);
  sfs::create_directories(warehouse);
  sfs::copy(base, warehouse + "/t", sfs::copy_options::recursive);

  sql::SessionOptions options;
  options.warehouse = warehouse;
  auto session = Check(sql::Session::Open(options), "session");
  std::vector<double> plain, with_checkpoint;
  // The base is at version 2 (create, first file, the N-file commit); version v checkpoints
  // when v % 10 == 0.
  int64_t version = 2;
  for (int i = 0; i < commits; ++i) {
    const std::string sql = "INSERT INTO t VALUES (" + std::to_string(files + i) + ", 'x')";
    auto start = std::chrono::steady_clock::now();
    Check(session->Execute(sql), "insert");
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    ++version;
    (version % 10 == 0 ? with_checkpoint : plain).push_back(ms);
  }
  Summary p = Summarize(plain), c = Summarize(with_checkpoint);
  std::printf(
      "files=%d commits=%d median_ms=%.2f mean_ms=%.2f p90_ms=%.2f max_ms=%.2f "
      "checkpoint_commits=%zu checkpoint_median_ms=%.2f checkpoint_max_ms=%.2f\n",
      files, commits, p.median, p.mean, p.p90, p.max, c.n, c.median, c.max);
  std::fflush(stdout);
}

std::vector<int> ParseList(const char* s) {
  std::vector<int> out;
  std::string text(s);
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    out.push_back(std::atoi(text.substr(pos, comma - pos).c_str()));
    pos = comma + 1;
  }
  return out;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  std::vector<int> sizes = {100, 1000, 10000};
  int commits = 50;
  std::string dir =
      std::filesystem::is_directory("/dev/shm")
          ? "/dev/shm/sluice-delta-commit-bench"
          : (std::filesystem::temp_directory_path() / "sluice-delta-commit-bench").string();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--files" && i + 1 < argc) {
      sizes = sluice::ParseList(argv[++i]);
    } else if (a == "--commits" && i + 1 < argc) {
      commits = std::atoi(argv[++i]);
    } else if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--files 100,1000,10000] [--commits 50] [--dir DIR]\n",
                   argv[0]);
      return 2;
    }
  }
  for (int n : sizes) {
    if (n < 1 || commits < 1) {
      std::fprintf(stderr, "--files and --commits must be positive\n");
      return 2;
    }
  }
  for (int n : sizes) sluice::RunSize(dir, n, commits);
  return 0;
}
