// Commit latency of one `sluice sql` session against the size of the table (issue 16, section 3:
// a table of 10,000 commits): plain INSERTs of one row, each its own commit, and UPDATE, DELETE
// and MERGE of one row, into tables that already hold 100, 1,000 and 10,000 files. Goal: a
// commit's cost does not grow with the table.
//
//   cmake --build <dir> --target delta_commit_bench
//   <dir>/bench/delta_commit_bench [--files 100,1000,10000] [--commits 50] [--dml 20]
//                                  [--ops insert,update,delete,merge] [--dir DIR]
//
// For each size N it builds a base table DIR/base-N/t (id INT, s STRING,
// delta.checkpointInterval=10): one commit adding N one-row Parquet files (row i has id i and
// stats min = max = i), and a checkpoint of it, as a long log leaves the table after its last
// checkpoint. For each operation it then copies the base to DIR/sluice-N-<op>/t and runs
// statements through one sql::Session, timing each statement:
//   insert  --commits INSERT INTO t VALUES (N + i, 'x')
//   update  --dml     UPDATE t SET s = 'u' WHERE id = k
//   delete  --dml     DELETE FROM t WHERE id = k
//   merge   --dml     MERGE INTO t USING (SELECT k AS id, 'm' AS s) AS src ON t.id = src.id
//                     WHEN MATCHED THEN UPDATE SET s = src.s
// with k a different existing row each time (so each DML statement rewrites one file of one
// row, which data skipping finds among the N). Every statement is one commit; every tenth
// version also writes a checkpoint of all N files, as Delta's protocol asks. The base tables stay
// in DIR so that bench/delta_commit_rs.py can make delta-rs do the same to the same tables.
// DIR defaults to /dev/shm/sluice-delta-commit-bench (tmpfs: the fsyncs are not what is
// measured).
//
// One line per size and operation: op, files, statements, median / mean / p90 / max ms per
// statement, and the same for the statements whose commit wrote a checkpoint. Figures are
// recorded in bench/RESULTS.md ("## Delta commits in one session").
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench_check.h"
#include "delta/table.h"
#include "delta/table_writer.h"
#include "engine/engine.h"
#include "fs/file_system.h"
#include "sql/session.h"

namespace sluice {
namespace {

using bench::Check;
using bench::Seconds;

// The base table of `files` one-row files at `root`: row i (id i, s 's<i>') in file i.
void BuildBase(const std::string& root, int files) {
  auto fs = fs::LocalFileSystem();
  auto engine = Check(engine::Engine::Open(), "engine");
  auto conn = Check(engine->Connect(), "connect");
  delta::TableWriterOptions writer_options;
  writer_options.commit.sync = false;  // tmpfs; the base is built once
  auto writer =
      Check(delta::DeltaTableWriter::Open(fs, engine.get(), root, writer_options), "writer");
  auto rows = Check(conn->Query("SELECT i::INTEGER AS id, 's' || i AS s FROM range(" +
                                std::to_string(files) + ") AS r(i) ORDER BY i"),
                    "rows");
  delta::CreateTableOptions create;
  create.configuration["delta.checkpointInterval"] = "10";
  Check(writer->CreateTable(rows.schema(), create), "create");
  delta::WriteOptions write;
  write.max_rows_per_file = 1;
  Check(writer->Write(rows, write), "files");
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

// The statement of `op` for its i-th run in a table of `files` rows.
std::string Statement(const std::string& op, int files, int i) {
  const std::string k = std::to_string((static_cast<int64_t>(i) * 7919) % files);
  if (op == "insert") return "INSERT INTO t VALUES (" + std::to_string(files + i) + ", 'x')";
  if (op == "update") return "UPDATE t SET s = 'u' WHERE id = " + k;
  if (op == "delete") return "DELETE FROM t WHERE id = " + k;
  return "MERGE INTO t USING (SELECT " + k +
         " AS id, 'm' AS s) AS src ON t.id = src.id WHEN MATCHED THEN UPDATE SET s = src.s";
}

int64_t LatestVersion(const std::string& root) {
  auto engine = Check(engine::Engine::Open(), "engine");
  auto table = Check(delta::DeltaTable::Open(fs::LocalFileSystem(), engine.get(), root), "open");
  return Check(table->Latest(), "latest")->version.value();
}

void RunSize(const std::string& dir, int files, const std::string& op, int statements) {
  namespace sfs = std::filesystem;
  const std::string base = dir + "/base-" + std::to_string(files) + "/t";
  if (!sfs::exists(base + "/_delta_log")) {
    sfs::remove_all(sfs::path(base).parent_path());
    auto start = std::chrono::steady_clock::now();
    BuildBase(base, files);
    std::fprintf(stderr, "built %s (%d files) in %.1f s\n", base.c_str(), files, Seconds(start));
  }
  const std::string warehouse = dir + "/sluice-" + std::to_string(files) + "-" + op;
  sfs::remove_all(warehouse);
  sfs::create_directories(warehouse);
  sfs::copy(base, warehouse + "/t", sfs::copy_options::recursive);
  const int64_t base_version = LatestVersion(warehouse + "/t");

  sql::SessionOptions options;
  options.warehouse = warehouse;
  auto session = Check(sql::Session::Open(options), "session");
  std::vector<double> plain, with_checkpoint;
  int64_t version = base_version;  // version v checkpoints when v % 10 == 0
  for (int i = 0; i < statements; ++i) {
    const std::string sql = Statement(op, files, i);
    auto start = std::chrono::steady_clock::now();
    Check(session->Execute(sql), op.c_str());
    double ms = 1e3 * Seconds(start);
    ++version;
    (version % 10 == 0 ? with_checkpoint : plain).push_back(ms);
  }
  session.reset();
  if (LatestVersion(warehouse + "/t") != version) {
    std::fprintf(stderr, "%s at %d files: a statement did not commit exactly one version\n",
                 op.c_str(), files);
    std::exit(1);
  }
  Summary p = Summarize(plain), c = Summarize(with_checkpoint);
  std::printf(
      "op=%s files=%d statements=%d median_ms=%.2f mean_ms=%.2f p90_ms=%.2f max_ms=%.2f "
      "checkpoint_commits=%zu checkpoint_median_ms=%.2f checkpoint_max_ms=%.2f\n",
      op.c_str(), files, statements, p.median, p.mean, p.p90, p.max, c.n, c.median, c.max);
  std::fflush(stdout);
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  std::vector<int> sizes = {100, 1000, 10000};
  std::vector<std::string> ops = {"insert", "update", "delete", "merge"};
  int commits = 50, dml = 20;
  std::string dir =
      std::filesystem::is_directory("/dev/shm")
          ? "/dev/shm/sluice-delta-commit-bench"
          : (std::filesystem::temp_directory_path() / "sluice-delta-commit-bench").string();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--files" && i + 1 < argc) {
      sizes = sluice::bench::Ints(argv[++i]);
    } else if (a == "--commits" && i + 1 < argc) {
      commits = std::atoi(argv[++i]);
    } else if (a == "--dml" && i + 1 < argc) {
      dml = std::atoi(argv[++i]);
    } else if (a == "--ops" && i + 1 < argc) {
      ops = sluice::bench::Names(argv[++i]);
    } else if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: %s [--files 100,1000,10000] [--commits 50] [--dml 20] "
                   "[--ops insert,update,delete,merge] [--dir DIR]\n",
                   argv[0]);
      return 2;
    }
  }
  for (const std::string& op : ops) {
    if (op != "insert" && op != "update" && op != "delete" && op != "merge") {
      std::fprintf(stderr, "unknown operation '%s' in --ops (insert, update, delete, merge)\n",
                   op.c_str());
      return 2;
    }
  }
  for (int n : sizes) {
    if (n < 1 || commits < 1 || dml < 1 || dml > n) {
      std::fprintf(stderr,
                   "--files, --commits and --dml must be positive, and --dml at most the "
                   "smallest --files (each DML statement changes a different row)\n");
      return 2;
    }
  }
  for (int n : sizes) {
    for (const std::string& op : ops) sluice::RunSize(dir, n, op, op == "insert" ? commits : dml);
  }
  return 0;
}
