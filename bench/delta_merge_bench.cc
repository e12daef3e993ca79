// MERGE benchmark (src/delta/dml_merge.h): MERGE of 10,000 source rows into a 10M-row Delta
// table of 100 files (100,000 rows each, ids in file order), timing each MERGE and counting the
// files it rewrote. Goal (issue 3): rewrite only the files holding matched keys.
//
//   cmake --build <dir> --target delta_merge_bench && <dir>/bench/delta_merge_bench [table_dir]
//
// Scenarios, run one after the other on the same table:
//   clustered: 9,000 updates of ids 5,000,000 + 10*i (2 files hold them) + 1,000 inserts of new ids
//   scattered: 10,000 updates of ids spread evenly over the table (every file holds some)
//   no-insert clustered with delete: 10,000 matched keys in one file range, half deleted
// Figures are recorded in bench/RESULTS.md ("## Delta MERGE").
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "bench_check.h"
#include "delta/dml_merge.h"
#include "delta/table_writer.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::delta {
namespace {

using bench::Check;
using bench::Seconds;

void RunMerge(const DmlTable& table, engine::Connection* conn, const char* name,
              const std::string& source_sql, bool with_delete) {
  MergeSpec spec;
  spec.source_batch = Check(conn->Query(source_sql), "source");
  spec.on = "t.id = s.id";
  MergeClause del;
  del.kind = MergeClauseKind::kMatched;
  del.action = MergeActionKind::kDelete;
  del.condition = "s.v % 2 = 0";
  MergeClause upd;
  upd.kind = MergeClauseKind::kMatched;
  upd.action = MergeActionKind::kUpdate;
  upd.assignments = {{"v", "s.v"}, {"s", "'merged'"}};
  MergeClause ins;
  ins.kind = MergeClauseKind::kNotMatched;
  ins.action = MergeActionKind::kInsertAll;
  if (with_delete) spec.clauses.push_back(del);
  spec.clauses.push_back(upd);
  spec.clauses.push_back(ins);
  auto start = std::chrono::steady_clock::now();
  DmlResult r = Check(MergeInto(table, spec), name);
  double secs = Seconds(start);
  std::printf(
      "%-26s %8.2f s  files rewritten %3zu  files added %3zu  updated %6lld  deleted %6lld  "
      "inserted %6lld\n",
      name, secs, r.removed_files.size(), r.added_files.size(),
      static_cast<long long>(r.metrics["numTargetRowsUpdated"]),
      static_cast<long long>(r.metrics["numTargetRowsDeleted"]),
      static_cast<long long>(r.metrics["numTargetRowsInserted"]));
  std::fflush(stdout);
}

int Main(int argc, char** argv) {
  std::string dir =
      argc > 1 ? argv[1] : (std::filesystem::temp_directory_path() / "sluice-merge-bench").string();
  std::filesystem::remove_all(dir);
  auto engine = Check(engine::Engine::Open(), "engine");
  auto conn = Check(engine->Connect(), "connect");
  TableWriterOptions wo;
  wo.commit.sync = false;
  auto writer =
      Check(DeltaTableWriter::Open(fs::LocalFileSystem(), engine.get(), dir, wo), "writer");

  auto start = std::chrono::steady_clock::now();
  engine::Batch rows = Check(conn->Query("SELECT range AS id, range * 3 AS v, 'row-' || range AS s "
                                         "FROM range(10000000)"),
                             "generate");
  WriteOptions opts;
  opts.max_rows_per_file = 100000;
  WriteResult w = Check(writer->Write(rows, opts), "write");
  rows = engine::Batch();
  std::printf("table: %lld rows in %lld files (%.1f MB), written in %.2f s\n",
              static_cast<long long>(w.num_rows), static_cast<long long>(w.num_files),
              static_cast<double>(w.num_bytes) / 1e6, Seconds(start));

  DmlTable table{writer.get(), fs::LocalFileSystem(), engine.get(), conn.get()};
  RunMerge(table, conn.get(), "clustered upsert",
           "SELECT 5000000 + 10 * range AS id, -range AS v, 'src' AS s FROM range(9000) UNION ALL "
           "SELECT 20000000 + range, range, 'new' FROM range(1000)",
           false);
  RunMerge(table, conn.get(), "scattered upsert",
           "SELECT range * 1000 + 7 AS id, -range AS v, 'src' AS s FROM range(10000)", false);
  RunMerge(table, conn.get(), "clustered update+delete",
           "SELECT 7000000 + range AS id, range AS v, 'src' AS s FROM range(10000)", true);
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace sluice::delta

int main(int argc, char** argv) { return sluice::delta::Main(argc, argv); }
