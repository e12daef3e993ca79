// Deletion vector benchmark (issue 19; src/delta/dml_deletion_vectors.h): the same MERGE on two
// copies of one table, one with delta.enableDeletionVectors=true (the MERGE marks the old rows in
// DVs and writes only the new ones) and one without (the MERGE rewrites every file holding a
// matched row), side by side as a ratio; then a full scan of the DV table against the same
// rows without DVs (the rewritten copy: as many files, no DVs), as a ratio too.
//
//   cmake --build <dir> --target delta_dv_bench
//   <dir>/bench/delta_dv_bench [--rows N] [--files F] [--scans K] [--keep] [dir]
//
// Table: N rows (default 10,000,000) (id BIGINT, v BIGINT, s VARCHAR) in F files (default 100) in
// id order, unpartitioned, fsync off. MERGE: N/100 source rows (1 %), ids spread evenly (every
// file holds some), WHEN MATCHED THEN UPDATE SET v, s. Scan: SELECT count(*), sum(v),
// sum(length(s)) over the table's scan SQL (DV files read and their rows dropped), best of K in
// wall and in process CPU time (the comparable figure on a shared machine).
// Goals (issue 19): MERGE with DVs >= 5x faster; scan with DVs <= 10 % slower.
// Figures: bench/RESULTS.md, "## Delta deletion vectors".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "bench_check.h"
#include "delta/dml_merge.h"
#include "delta/scan.h"
#include "delta/table_writer.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::delta {
namespace {

using bench::Check;
using bench::CpuSeconds;
using bench::Seconds;

struct Copy {
  std::string name;
  std::unique_ptr<DeltaTableWriter> writer;
  std::unique_ptr<engine::Connection> conn;
};

Copy MakeTable(engine::Engine* engine, const std::string& dir, bool dvs, const engine::Batch& rows,
               int64_t rows_per_file) {
  Copy c;
  c.name = dvs ? "with DVs" : "rewrite";
  c.conn = Check(engine->Connect(), "connect");
  TableWriterOptions wo;
  wo.commit.sync = false;
  c.writer = Check(DeltaTableWriter::Open(fs::LocalFileSystem(), engine, dir, wo), "writer");
  CreateTableOptions create;
  if (dvs) create.configuration = {{"delta.enableDeletionVectors", "true"}};
  Check(c.writer->CreateTable(rows.schema(), create), "create");
  WriteOptions opts;
  opts.max_rows_per_file = rows_per_file;
  Check(c.writer->Write(rows, opts), "write");
  return c;
}

struct Timing {
  double wall = 1e30;  // best of the scans
  double cpu = 1e30;   // best of the scans
};

Timing Merge(Copy& c, engine::Engine* engine, const engine::Batch& source) {
  MergeSpec spec;
  spec.source_batch = source;
  spec.on = "t.id = s.id";
  MergeClause upd;
  upd.kind = MergeClauseKind::kMatched;
  upd.action = MergeActionKind::kUpdate;
  upd.assignments = {{"v", "s.v"}, {"s", "'merged'"}};
  spec.clauses.push_back(upd);
  DmlTable table{c.writer.get(), fs::LocalFileSystem(), engine, c.conn.get()};
  auto start = std::chrono::steady_clock::now();
  const double cpu_start = CpuSeconds();
  DmlResult r = Check(MergeInto(table, spec), "merge");
  const Timing t{Seconds(start), CpuSeconds() - cpu_start};
  std::printf(
      "MERGE %-9s %8.2f s wall, %6.2f s CPU  files removed %3zu  added %3zu  updated %8lld  DVs "
      "added %lld\n",
      c.name.c_str(), t.wall, t.cpu, r.removed_files.size(), r.added_files.size(),
      static_cast<long long>(r.metrics["numTargetRowsUpdated"]),
      static_cast<long long>(r.metrics.count("numTargetDeletionVectorsAdded")
                                 ? r.metrics["numTargetDeletionVectorsAdded"]
                                 : 0));
  std::fflush(stdout);
  return t;
}

Timing Scan(Copy& c, int scans, std::string* answer) {
  Timing best;
  for (int i = 0; i < scans; ++i) {
    auto start = std::chrono::steady_clock::now();
    const double cpu_start = CpuSeconds();
    auto snap = Check(c.writer->Latest(), "latest");
    std::string sql =
        Check(ScanSnapshotSql(c.conn.get(), fs::LocalFileSystem().get(), *snap), "scan sql");
    engine::Batch b =
        Check(c.conn->Query("SELECT count(*), sum(v), sum(length(s)) FROM (" + sql + ")"), "scan");
    best.wall = std::min(best.wall, Seconds(start));
    best.cpu = std::min(best.cpu, CpuSeconds() - cpu_start);
    *answer = b.GetString(0, 0).value_or("?") + " rows, sum(v) " + b.GetString(0, 1).value_or("?") +
              ", sum(length(s)) " + b.GetString(0, 2).value_or("?");
  }
  std::printf("scan  %-9s %8.3f s wall, %8.3f s CPU (best of %d)  %s\n", c.name.c_str(), best.wall,
              best.cpu, scans, answer->c_str());
  std::fflush(stdout);
  return best;
}

int Main(int argc, char** argv) {
  int64_t rows = 10'000'000, files = 100;
  int scans = 5;
  bool keep = false;  // --keep: leave the two tables in dir (to look at them)
  std::string dir = (std::filesystem::temp_directory_path() / "sluice-dv-bench").string();
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rows") && i + 1 < argc) {
      rows = std::atoll(argv[++i]);
    } else if (!std::strcmp(argv[i], "--files") && i + 1 < argc) {
      files = std::atoll(argv[++i]);
    } else if (!std::strcmp(argv[i], "--scans") && i + 1 < argc) {
      scans = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--keep")) {
      keep = true;
    } else {
      dir = argv[i];
    }
  }
  std::filesystem::remove_all(dir);
  auto engine = Check(engine::Engine::Open(), "engine");
  auto conn = Check(engine->Connect(), "connect");
  const std::string n = std::to_string(rows);
  engine::Batch data = Check(
      conn->Query("SELECT range AS id, range * 3 AS v, 'row-' || range AS s FROM range(" + n + ")"),
      "generate");
  auto start = std::chrono::steady_clock::now();
  Copy dv = MakeTable(engine.get(), dir + "/dv", true, data, std::max<int64_t>(1, rows / files));
  Copy rw =
      MakeTable(engine.get(), dir + "/rewrite", false, data, std::max<int64_t>(1, rows / files));
  data = engine::Batch();
  std::printf("tables: 2 x %lld rows in %lld files, written in %.1f s\n",
              static_cast<long long>(rows), static_cast<long long>(files), Seconds(start));

  // 1 % of the rows, spread evenly: ids 0, 100, 200, ...
  engine::Batch source = Check(conn->Query("SELECT range * 100 AS id, -range AS v FROM range(" +
                                           std::to_string(rows / 100) + ")"),
                               "source");
  Timing t_rw = Merge(rw, engine.get(), source);
  Timing t_dv = Merge(dv, engine.get(), source);
  std::printf("MERGE ratio (rewrite / DVs): wall %.1fx, CPU %.1fx\n", t_rw.wall / t_dv.wall,
              t_rw.cpu / t_dv.cpu);

  std::string a_dv, a_rw;
  Timing s_dv = Scan(dv, scans, &a_dv);
  Timing s_rw = Scan(rw, scans, &a_rw);
  if (a_dv != a_rw) {
    std::fprintf(stderr, "the two tables differ: %s vs %s\n", a_dv.c_str(), a_rw.c_str());
    return 1;
  }
  std::printf("scan ratio (DVs / no DVs): wall %.3f (%+.1f %%), CPU %.3f (%+.1f %%)\n",
              s_dv.wall / s_rw.wall, (s_dv.wall / s_rw.wall - 1) * 100, s_dv.cpu / s_rw.cpu,
              (s_dv.cpu / s_rw.cpu - 1) * 100);
  if (!keep) std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace sluice::delta

int main(int argc, char** argv) { return sluice::delta::Main(argc, argv); }
