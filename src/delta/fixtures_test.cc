// Reads every table in test/fixtures/delta (written by real Spark + Delta Lake and real delta-rs,
// scripts/fixtures/) and checks it against FIXTURES.md and the writers' own readings
// (<writer>/<name>.summary.json).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "delta/changes.h"
#include "delta/log_segment.h"
#include "delta/paths.h"
#include "delta/table.h"
#include "delta/test_util.h"
#include "delta/values.h"
#include "fs/file_system.h"

namespace sluice::delta {
namespace {

using testing::CopyFixture;
using ::testing::ElementsAre;
using testing::Fixture;
using ::testing::HasSubstr;
using testing::Rows;
using testing::Sorted;
using testing::TempDir;

std::vector<std::string> Range(int from, int to_inclusive) {
  std::vector<std::string> out;
  for (int i = from; i <= to_inclusive; ++i) out.push_back(std::to_string(i));
  return out;
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

int64_t IsoMillis(const std::string& iso) {
  auto r = ParseTimestampMicros(iso);
  EXPECT_TRUE(r.ok()) << iso;
  return r.ok() ? *r / 1000 : 0;
}

// The writer's own reading of fixture `rel` (scripts/fixtures writes <rel>.summary.json).
nlohmann::json Summary(const std::string& rel) {
  std::ifstream in(Fixture(rel) + ".summary.json");
  EXPECT_TRUE(in.good()) << "no summary for " << rel;
  if (!in.good()) return nlohmann::json::object();
  return nlohmann::json::parse(in);
}

// A list of strings of a summary (e.g. "files", or files_by_version["3"]), sorted.
std::vector<std::string> SummaryList(const nlohmann::json& j) {
  std::vector<std::string> out;
  if (j.is_array()) {
    for (const auto& v : j) out.push_back(v.get<std::string>());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The writer's rows of a summary ("rows": JSON objects with sorted keys) rendered as Rows()
// renders Sluice's, over the columns whose values have one rendering in both: numbers, strings,
// booleans and NULL. Columns holding nested values, timestamps (Python prints them in its own
// form) or binary are left out. Returns the columns used and the rows.
std::pair<std::vector<std::string>, std::vector<std::string>> WriterRows(
    const nlohmann::json& rows) {
  std::vector<nlohmann::json> parsed;
  for (const auto& r : rows) parsed.push_back(nlohmann::json::parse(r.get<std::string>()));
  std::vector<std::string> columns;
  if (parsed.empty()) return {};
  const std::regex timestamp(R"(^\d{4}-\d{2}-\d{2} \d{2}:\d{2}.*)");
  for (const auto& [name, unused] : parsed[0].items()) {
    bool comparable = true;
    for (const auto& row : parsed) {
      const nlohmann::json& v = row[name];
      if (v.is_structured()) comparable = false;
      if (v.is_string()) {
        const std::string text = v.get<std::string>();
        if (std::regex_match(text, timestamp) || text.rfind("b'", 0) == 0) comparable = false;
      }
    }
    if (comparable) columns.push_back(name);
  }
  std::vector<std::string> out;
  for (const auto& row : parsed) {
    std::string line;
    for (size_t i = 0; i < columns.size(); ++i) {
      const nlohmann::json& v = row[columns[i]];
      if (i > 0) line += "|";
      if (v.is_null()) {
        line += "NULL";
      } else if (v.is_string()) {
        line += v.get<std::string>();
      } else {
        line += v.dump();
      }
    }
    out.push_back(line);
  }
  std::sort(out.begin(), out.end());
  return {columns, out};
}

class FixtureTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto e = engine::Engine::Open();
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = e.MoveValueUnsafe().release();
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }

  std::unique_ptr<DeltaTable> Open(const std::string& path) {
    auto t = DeltaTable::Open(fs::LocalFileSystem(), engine_, path);
    EXPECT_TRUE(t.ok()) << path << ": " << t.status().ToString();
    return t.ok() ? t.MoveValueUnsafe() : nullptr;
  }
  std::unique_ptr<DeltaTable> OpenFixture(const std::string& rel) { return Open(Fixture(rel)); }

  Status OpenError(const std::string& rel) {
    auto t = DeltaTable::Open(fs::LocalFileSystem(), engine_, Fixture(rel));
    if (t.ok()) return Status::OK();
    return t.status();
  }
  // The error of opening `rel` and scanning its latest snapshot (some refusals come at scan time).
  Status OpenOrScanError(const std::string& rel) {
    auto t = DeltaTable::Open(fs::LocalFileSystem(), engine_, Fixture(rel));
    if (!t.ok()) return t.status();
    auto snap = (*t)->Latest();
    if (!snap.ok()) return snap.status();
    auto b = (*t)->Scan(**snap);
    return b.ok() ? Status::OK() : b.status();
  }

  // All rows of the latest snapshot, rendered.
  std::vector<std::string> LatestRows(DeltaTable* t, const std::vector<std::string>& cols = {}) {
    auto snap = t->Latest();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    if (!snap.ok()) return {};
    return ScanRows(t, **snap, cols);
  }
  std::vector<std::string> ScanRows(DeltaTable* t, const Snapshot& snap,
                                    const std::vector<std::string>& cols = {}) {
    auto b = t->Scan(snap);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    if (!b.ok()) return {};
    return Rows(*b, cols);
  }
  std::vector<std::string> VersionRows(DeltaTable* t, int64_t v,
                                       const std::vector<std::string>& cols = {}) {
    auto snap = t->SnapshotAt(Version(v));
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    if (!snap.ok()) return {};
    return ScanRows(t, **snap, cols);
  }
  static std::vector<std::string> LivePaths(const Snapshot& s) {
    std::vector<std::string> out;
    for (const AddFile& f : s.files) out.push_back(f.path);
    return out;
  }
  // Live paths decoded as a file-system path relative to the table (how the writers list them).
  static std::vector<std::string> LiveRelativeFiles(const Snapshot& s) {
    std::vector<std::string> out;
    for (const AddFile& f : s.files) {
      auto decoded = PercentDecode(f.path);
      EXPECT_TRUE(decoded.ok()) << f.path;
      out.push_back(decoded.ok() ? *decoded : f.path);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  // Sets the mtime of _delta_log/<name> in a copied table.
  static void Touch(const std::string& table, const std::string& name, int64_t ms) {
    Status st = fs::LocalFileSystem()->SetModificationTime(table + "/_delta_log/" + name, ms);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  static engine::Engine* engine_;
};

engine::Engine* FixtureTest::engine_ = nullptr;

// Every fixture directory has a test below; a new fixture without one fails here.
TEST_F(FixtureTest, EveryFixtureIsCovered) {
  const std::set<std::string> covered = {"spark/basic-with-checkpoint",
                                         "spark/cdf-dml",
                                         "spark/cdf-optimize",
                                         "spark/checkpoint",
                                         "spark/column-mapping-id-rename-drop",
                                         "spark/column-mapping-name",
                                         "spark/column-mapping-name-rename-drop",
                                         "spark/column-mapping-upgraded",
                                         "spark/deletion-vectors",
                                         "spark/deletion-vectors-checkpoint",
                                         "spark/deletion-vectors-dml",
                                         "spark/deletion-vectors-large",
                                         "spark/empty",
                                         "spark/empty-last-checkpoint",
                                         "spark/inserts-deletes-checkpoint",
                                         "spark/inserts-updates",
                                         "spark/invalid-protocol-version",
                                         "spark/missing-last-checkpoint",
                                         "spark/multi-part-checkpoint",
                                         "spark/nested",
                                         "spark/only-checkpoint-files",
                                         "spark/overwrite-restore",
                                         "spark/partition-special-chars",
                                         "spark/partition-values",
                                         "spark/primitives",
                                         "spark/protocol-1-1",
                                         "spark/restore-re-add",
                                         "spark/snapshot-data0",
                                         "spark/snapshot-data2",
                                         "spark/snapshot-data2-deleted",
                                         "spark/snapshot-repartitioned",
                                         "spark/snapshot-vacuumed",
                                         "spark/stale-last-checkpoint",
                                         "spark/stats-all-types",
                                         "spark/stats-as-struct",
                                         "spark/time-travel",
                                         "spark/time-travel-partition-change",
                                         "spark/time-travel-schema-change",
                                         "spark/timestamp-int96",
                                         "spark/timestamp-ntz",
                                         "spark/timestamp-partition-iso8601",
                                         "spark/txn",
                                         "spark/type-widening",
                                         "spark/unknown-reader-feature",
                                         "spark/v2-checkpoint",
                                         "spark/v2-checkpoint-parquet",
                                         "spark/versions-not-contiguous",
                                         "deltars/cdf-table",
                                         "deltars/checkpoints_vacuumed",
                                         "deltars/column-mapping-id",
                                         "deltars/column-mapping-name",
                                         "deltars/empty-commits",
                                         "deltars/merge-cdf",
                                         "deltars/partitioned",
                                         "deltars/partitioned-by-date",
                                         "deltars/simple_table",
                                         "deltars/simple_table_features",
                                         "deltars/simple_table_with_cdc",
                                         "deltars/simple_table_with_checkpoint",
                                         "deltars/txn-checkpoint"};
  int seen = 0;
  for (const char* group : {"spark", "deltars"}) {
    for (const auto& e : std::filesystem::directory_iterator(Fixture(group))) {
      if (!e.is_directory()) continue;
      std::string name = std::string(group) + "/" + e.path().filename().string();
      EXPECT_TRUE(covered.count(name)) << "fixture without a test: " << name;
      EXPECT_TRUE(std::filesystem::exists(e.path().string() + ".summary.json"))
          << "fixture without the writer's reading: " << name;
      ++seen;
    }
  }
  EXPECT_EQ(seen, static_cast<int>(covered.size()));
}

// Sluice's latest version, row count and partition columns equal the writer's own reading.
TEST_F(FixtureTest, ReadableFixturesMatchTheWritersReading) {
  for (const char* group : {"spark", "deltars"}) {
    for (const auto& e : std::filesystem::directory_iterator(Fixture(group))) {
      if (!e.is_directory()) continue;
      std::string rel = std::string(group) + "/" + e.path().filename().string();
      SCOPED_TRACE(rel);
      nlohmann::json s = Summary(rel);
      if (!s.contains("version")) continue;  // the writer itself cannot read it
      auto t = DeltaTable::Open(fs::LocalFileSystem(), engine_, e.path().string());
      if (!t.ok()) {
        // Only the expected refusals (tests below) may fail: they name a table feature.
        EXPECT_TRUE(t.status().IsNotSupported()) << t.status().ToString();
        continue;
      }
      auto snap = (*t)->Latest();
      ASSERT_TRUE(snap.ok()) << snap.status().ToString();
      EXPECT_EQ((*snap)->version, Version(s["version"].get<int64_t>()));
      std::vector<std::string> parts = s["partition_columns"];
      EXPECT_EQ((*snap)->metadata.partition_columns, parts);
      auto b = (*t)->Scan(**snap);
      if (!b.ok()) {
        EXPECT_TRUE(b.status().IsNotSupported()) << b.status().ToString();
        continue;
      }
      EXPECT_EQ(b->num_rows(), s["num_rows"].get<int64_t>());
      if (s.contains("rows")) {
        auto [columns, theirs] = WriterRows(s["rows"]);
        if (!columns.empty()) {
          EXPECT_EQ(Rows(*b, columns), theirs) << "columns " << ::testing::PrintToString(columns);
        }
      }
      if (s.contains("files")) {
        EXPECT_EQ(LiveRelativeFiles(**snap), SummaryList(s["files"]));
      }
      auto history = (*t)->History();
      ASSERT_TRUE(history.ok()) << history.status().ToString();
      EXPECT_EQ(history->size(), s["history"].size());
      if (s.contains("cdf")) {
        int64_t first = history->empty() ? 0 : history->back().version.value();
        auto changes = (*t)->Changes(Version(first));
        ASSERT_TRUE(changes.ok()) << changes.status().ToString();
        EXPECT_EQ(changes->num_rows(), static_cast<int64_t>(s["cdf"].size()));
        auto [columns, theirs] = WriterRows(s["cdf"]);
        EXPECT_EQ(Rows(*changes, columns), theirs) << "CDF " << ::testing::PrintToString(columns);
      }
      if (s.contains("sums")) {  // large tables: per-column sums instead of rows
        for (const auto& [column, sum] : s["sums"].items()) {
          auto c = b->ColumnIndex(column);
          ASSERT_TRUE(c.has_value()) << column;
          int64_t ours = 0;
          for (int64_t r = 0; r < b->num_rows(); ++r) ours += b->GetInt64(r, *c)->value_or(0);
          EXPECT_EQ(ours, sum.get<int64_t>()) << "sum of " << column;
        }
      }
      if (s.contains("files_by_version")) {
        EXPECT_EQ(LiveRelativeFiles(**snap),
                  SummaryList(s["files_by_version"][std::to_string(s["version"].get<int>())]));
      }
    }
  }
}

// ---------------- spark: snapshots, checkpoints, log replay ----------------

TEST_F(FixtureTest, SnapshotData0) {
  auto t = OpenFixture("spark/snapshot-data0");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(0));
  EXPECT_EQ(snap->files.size(), 2u);
  std::vector<std::string> expected;
  for (int i = 0; i < 10; ++i)
    expected.push_back(std::to_string(i) + "|data-0-" + std::to_string(i));
  EXPECT_EQ(LatestRows(t.get()), Sorted(expected));
  // Live files are exactly the parquet files in the directory.
  std::vector<std::string> on_disk;
  for (const auto& e : std::filesystem::directory_iterator(Fixture("spark/snapshot-data0"))) {
    if (e.path().extension() == ".parquet") on_disk.push_back(e.path().filename().string());
  }
  EXPECT_EQ(LivePaths(*snap), Sorted(on_disk));
}

TEST_F(FixtureTest, SnapshotData2) {
  auto t = OpenFixture("spark/snapshot-data2");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(2));
  EXPECT_EQ(snap->tombstones.size(), 4u);
  std::vector<std::string> expected;
  for (int i = 0; i < 10; ++i)
    expected.push_back(std::to_string(i) + "|data-2-" + std::to_string(i));
  EXPECT_EQ(LatestRows(t.get()), Sorted(expected));
}

TEST_F(FixtureTest, SnapshotData2Deleted) {
  auto t = OpenFixture("spark/snapshot-data2-deleted");
  ASSERT_TRUE(t);
  EXPECT_EQ((*t->Latest())->version, Version(4));
  auto rows = LatestRows(t.get(), {"col2"});
  ASSERT_EQ(rows.size(), 20u);
  for (const auto& r : rows) EXPECT_THAT(r, HasSubstr("data-3-"));
}

TEST_F(FixtureTest, SnapshotRepartitionedAndVacuumed) {
  // Delta 4.4 logs VACUUM as two commits (VACUUM START, VACUUM END): v6 and v7.
  for (auto [name, version] : {std::pair<const char*, int64_t>{"spark/snapshot-repartitioned", 5},
                               {"spark/snapshot-vacuumed", 7}}) {
    SCOPED_TRACE(name);
    auto t = OpenFixture(name);
    ASSERT_TRUE(t);
    auto snap = *t->Latest();
    EXPECT_EQ(snap->version, Version(version));
    EXPECT_EQ(snap->files.size(), 2u);
    for (const AddFile& f : snap->files) EXPECT_FALSE(f.data_change);
    auto rows = LatestRows(t.get(), {"col2"});
    ASSERT_EQ(rows.size(), 20u);
    for (const auto& r : rows) EXPECT_THAT(r, HasSubstr("data-3-"));
  }
  // Vacuumed: the live files are the only parquet files left.
  std::vector<std::string> on_disk;
  for (const auto& e : std::filesystem::directory_iterator(Fixture("spark/snapshot-vacuumed"))) {
    if (e.path().extension() == ".parquet") on_disk.push_back(e.path().filename().string());
  }
  auto t = OpenFixture("spark/snapshot-vacuumed");
  ASSERT_TRUE(t);
  EXPECT_EQ(LivePaths(**t->Latest()), Sorted(on_disk));
  auto history = t->History(2);
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ(history->at(0).commit_info->operation, std::optional<std::string>("VACUUM END"));
  EXPECT_EQ(history->at(1).commit_info->operation, std::optional<std::string>("VACUUM START"));
}

TEST_F(FixtureTest, Checkpoint) {
  auto t = OpenFixture("spark/checkpoint");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(14));
  ASSERT_TRUE(snap->segment.checkpoint.has_value());
  EXPECT_EQ(snap->segment.checkpoint->version, Version(10));
  EXPECT_EQ(snap->segment.commits.size(), 4u);  // 11..14
  EXPECT_EQ(LivePaths(*snap), SummaryList(Summary("spark/checkpoint")["files"]));
  EXPECT_EQ(snap->files.size(), 1u);
  EXPECT_EQ(LatestRows(t.get(), {"id"}), std::vector<std::string>{"14"});
  EXPECT_EQ(VersionRows(t.get(), 9, {"id"}), std::vector<std::string>{"9"});
}

TEST_F(FixtureTest, InsertsDeletesCheckpoint) {
  auto t = OpenFixture("spark/inserts-deletes-checkpoint");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(13));
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->version, Version(10));
  std::vector<std::string> ids;
  for (int b : {0, 10, 20, 30, 40}) {
    for (int i = b; i < b + 5; ++i) ids.push_back(std::to_string(i));
  }
  for (int i = 50; i <= 65; ++i) ids.push_back(std::to_string(i));
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted(ids));
}

TEST_F(FixtureTest, InsertsUpdates) {
  auto t = OpenFixture("spark/inserts-updates");
  ASSERT_TRUE(t);
  std::vector<std::string> expected;
  for (int i = 0; i < 100; ++i)
    expected.push_back(std::to_string(i) + "|" + (i < 50 ? "N/A" : "val=" + std::to_string(i)));
  EXPECT_EQ(LatestRows(t.get(), {"id", "str"}), Sorted(expected));
}

TEST_F(FixtureTest, OverwriteRestore) {
  auto t = OpenFixture("spark/overwrite-restore");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(3));
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->version, Version(3));
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted(Range(0, 199)));
  EXPECT_EQ(VersionRows(t.get(), 2, {"id"}), Sorted(Range(500, 999)));
  auto history = t->History(1);
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(history->front().commit_info->operation, std::optional<std::string>("RESTORE"));
}

TEST_F(FixtureTest, OnlyCheckpointFiles) {
  auto t = OpenFixture("spark/only-checkpoint-files");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->version, snap->version);
  EXPECT_EQ(snap->version, Version(2));
  EXPECT_TRUE(snap->segment.commits.empty());  // no JSON needed
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted(Concat(Range(5, 9), Range(0, 19))));
}

TEST_F(FixtureTest, MultiPartCheckpoint) {
  auto t = OpenFixture("spark/multi-part-checkpoint");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->version, Version(1));
  EXPECT_EQ(snap->segment.checkpoint->files.size(), 2u);
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted(Concat({"0"}, Range(0, 29))));
}

TEST_F(FixtureTest, EmptyLastCheckpoint) {
  auto t = OpenFixture("spark/empty-last-checkpoint");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(3));
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->version, Version(2));
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted(Range(0, 99)));
}

TEST_F(FixtureTest, MissingLastCheckpoint) {
  EXPECT_FALSE(std::filesystem::exists(Fixture("spark/missing-last-checkpoint") +
                                       "/_delta_log/_last_checkpoint"));
  auto t = OpenFixture("spark/missing-last-checkpoint");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(3));
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->version, Version(2));
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted(Range(0, 99)));
}

TEST_F(FixtureTest, StaleLastCheckpoint) {
  auto t = OpenFixture("spark/stale-last-checkpoint");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(3));
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->version, Version(3));  // not the stale hint (1)
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted(Range(0, 19)));
}

TEST_F(FixtureTest, RsEmptyCommits) {
  auto t = OpenFixture("deltars/empty-commits");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(11));
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->version, Version(10));
  EXPECT_EQ(snap->files.size(), 5u);
  EXPECT_EQ(LatestRows(t.get(), {"col1"}), Sorted(Range(1, 5)));
  EXPECT_EQ(VersionRows(t.get(), 7, {"col1"}), Sorted(Range(1, 5)));
}

TEST_F(FixtureTest, BasicWithCheckpoint) {
  auto t = OpenFixture("spark/basic-with-checkpoint");
  ASSERT_TRUE(t);
  EXPECT_EQ((*t->Latest())->version, Version(14));
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted(Range(0, 149)));
}

TEST_F(FixtureTest, RestoreReAddsTheSameFile) {
  auto t = OpenFixture("spark/restore-re-add");
  ASSERT_TRUE(t);
  auto v0 = *t->SnapshotAt(Version(0));
  auto v1 = *t->SnapshotAt(Version(1));
  auto latest = *t->Latest();
  ASSERT_EQ(v0->files.size(), 1u);
  ASSERT_EQ(v1->files.size(), 1u);
  const std::string a = v0->files[0].path;
  EXPECT_NE(v0->files[0].modification_time, 1700000000000);
  EXPECT_NE(v1->files[0].path, a);
  // v2 RESTORE re-adds A (removed at v1; the generator gave the re-add its own modificationTime);
  // v3 appends C.
  auto live = LivePaths(*latest);
  ASSERT_EQ(live.size(), 2u);
  EXPECT_THAT(live, ::testing::Contains(a));
  EXPECT_THAT(live, ::testing::Not(::testing::Contains(v1->files[0].path)));
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted({"1", "3"}));
  for (const AddFile& f : latest->files) {
    if (f.path == a) {
      EXPECT_EQ(f.modification_time, 1700000000000);  // v2's add, not v0's
    }
  }
}

// ---------------- spark: types and partitions ----------------

TEST_F(FixtureTest, Primitives) {
  auto t = OpenFixture("spark/primitives");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  auto b = t->Scan(*snap);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->num_rows(), 11);
  EXPECT_THAT(testing::ColumnNames(*b),
              ElementsAre("as_int", "as_long", "as_byte", "as_short", "as_boolean", "as_float",
                          "as_double", "as_string", "as_binary", "as_big_decimal", "as_decimal",
                          "as_date", "as_timestamp"));
  std::vector<std::string> expected = {
      "NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL"};
  for (int i = 0; i < 10; ++i) {
    std::string s = std::to_string(i);
    expected.push_back(s + "|" + s + "|" + s + "|" + s + "|" + (i % 2 == 0 ? "true" : "false") +
                       "|" + s + ".0|" + s + ".0|" + s + "|" + s + "|" + s +
                       ".500000000000000000|2020-01-" + (i < 9 ? "0" : "") + std::to_string(i + 1) +
                       "|2020-01-01 00:00:0" + s + ".123456+00");
  }
  EXPECT_EQ(
      Rows(*b, {"as_int", "as_long", "as_byte", "as_short", "as_boolean", "as_float", "as_double",
                "as_string", "as_big_decimal", "as_decimal", "as_date", "as_timestamp"}),
      Sorted(expected));
  // binary [i, i]
  auto bin = Rows(*b, {"as_int", "as_binary"});
  EXPECT_THAT(bin, ::testing::Contains("1|\\x01\\x01"));
}

TEST_F(FixtureTest, Nested) {
  auto t = OpenFixture("spark/nested");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  auto b = t->Scan(*snap);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_THAT(testing::ColumnNames(*b), ElementsAre("id", "arr", "m", "st", "arr_st"));
  EXPECT_EQ(Rows(*b),
            Sorted({"1|[1, 2, 3]|{a=1, b=2}|{'a': 1, 'b': one, 'inner': {'x': 1.5}}|"
                    "[{'val': x}, {'val': y}]",
                    "2|[]|{}|{'a': NULL, 'b': NULL, 'inner': NULL}|[]", "3|NULL|NULL|NULL|NULL"}));
}

TEST_F(FixtureTest, PartitionValues) {
  auto t = OpenFixture("spark/partition-values");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  auto b = t->Scan(*snap);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->num_rows(), 3);
  auto rows = Rows(*b, {"as_int", "as_long", "as_byte", "as_short", "as_boolean", "as_float",
                        "as_double", "as_string", "as_string_lit_null", "as_date", "as_timestamp",
                        "as_big_decimal", "value"});
  EXPECT_EQ(rows, Sorted({"0|0|0|0|true|0.0|0.0|0|null|2021-09-08|2021-09-08 11:11:11+00|0|0",
                          "1|1|1|1|false|1.0|1.0|1|null|2021-09-08|2021-09-08 11:11:11+00|1|1",
                          "NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|2"}));
  // The timestamp partition value is in the pre-ISO form.
  bool saw = false;
  for (const AddFile& f : snap->files) {
    auto it = f.partition_values.find("as_timestamp");
    if (it != f.partition_values.end() && it->second) {
      EXPECT_EQ(*it->second, "2021-09-08 11:11:11");
      saw = true;
    }
  }
  EXPECT_TRUE(saw);
  // Nested data columns are read too.
  EXPECT_EQ(
      Rows(*b, {"as_int", "as_nested_struct"}),
      Sorted({"0|{'a': 0, 'b': [{'val': 0}]}", "1|{'a': 1, 'b': [{'val': 1}]}", "NULL|NULL"}));
}

TEST_F(FixtureTest, PartitionSpecialChars) {
  auto t = OpenFixture("spark/partition-special-chars");
  ASSERT_TRUE(t);
  EXPECT_EQ(LatestRows(t.get(), {"id", "p"}),
            Sorted({"1|a=b", "2|50%", "3|with space", "4|a/b", "5|x+y", "6|bar+%21", "7|ünïcødé ✓",
                    "8|semi;colon", "9|NULL"}));
  // Pruning on the raw value reads the one file of that partition.
  auto snap = *t->Latest();
  std::vector<AddFile> read;
  auto b = t->Scan(*snap, ScanFilter{{{"p", CompareOp::kEq, "bar+%21"}}}, &read);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(read.size(), 1u);
  EXPECT_EQ(Rows(*b, {"id"}), std::vector<std::string>{"6"});
}

TEST_F(FixtureTest, TimestampInt96) {
  auto t = OpenFixture("spark/timestamp-int96");
  ASSERT_TRUE(t);
  EXPECT_EQ(LatestRows(t.get(), {"id", "part", "time"}),
            Sorted({"0|2020-01-01 08:09:10.001+00|2020-02-01 08:09:10+00",
                    "1|2021-10-01 08:09:20+00|1999-01-01 09:00:00+00",
                    "2|2021-10-01 08:09:20+00|2000-01-01 09:00:00+00",
                    "3|1969-01-01 00:00:00+00|1969-01-01 00:00:00+00", "4|NULL|NULL"}));
}

TEST_F(FixtureTest, TimestampPartitionIso8601) {
  auto t = OpenFixture("spark/timestamp-partition-iso8601");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  for (const AddFile& f : snap->files) {
    EXPECT_THAT(f.partition_values.at("ts").value_or(""), ::testing::EndsWith(".000000Z"));
  }
  auto b = t->Scan(*snap);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(Rows(*b, {"ts"}), Sorted({"2024-01-01 10:00:00+00", "2024-01-02 12:30:00+00"}));
  // As epoch micros: 1704103200000000 and 1704198600000000.
  auto ts_col = *b->ColumnIndex("ts");
  std::set<int64_t> micros;
  for (int64_t r = 0; r < b->num_rows(); ++r)
    micros.insert(*ParseTimestampMicros(*b->GetString(r, ts_col)));
  EXPECT_EQ(micros, (std::set<int64_t>{1704103200000000, 1704198600000000}));
}

// ---------------- spark: time travel ----------------

TEST_F(FixtureTest, TimeTravelByTimestamp) {
  TempDir tmp;
  std::string path = CopyFixture("spark/time-travel", tmp);
  const int64_t start = 1540415658000;
  Touch(path, "00000000000000000000.json", start);
  Touch(path, "00000000000000000001.json", start + 20 * 60000);
  Touch(path, "00000000000000000002.json", start + 40 * 60000);
  auto t = Open(path);
  ASSERT_TRUE(t);
  struct Case {
    int64_t ts;
    int64_t version;
    size_t rows;
  } cases[] = {{start, 0, 10},
               {start + 10 * 60000, 0, 10},
               {start + 20 * 60000, 1, 20},
               {start + 40 * 60000, 2, 30}};
  for (const Case& c : cases) {
    auto snap = t->SnapshotAtTimestamp(c.ts);
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    EXPECT_EQ((*snap)->version, Version(c.version)) << c.ts;
    EXPECT_EQ(ScanRows(t.get(), **snap).size(), c.rows);
  }
  auto after = t->SnapshotAtTimestamp(start + 50 * 60000);
  ASSERT_FALSE(after.ok());
  EXPECT_THAT(after.status().message(), HasSubstr("after the latest available version"));
  auto before = t->SnapshotAtTimestamp(start - 1);
  ASSERT_FALSE(before.ok());
  EXPECT_THAT(before.status().message(), HasSubstr("before the earliest available version"));
  // Version time travel on the same table.
  EXPECT_EQ(VersionRows(t.get(), 1, {"id"}), Sorted(Range(0, 19)));
  auto beyond = t->SnapshotAt(Version(3));
  ASSERT_FALSE(beyond.ok());
  EXPECT_THAT(beyond.status().message(),
              HasSubstr("Cannot time travel Delta table to version 3. Available versions: [0, 2]"));
}

TEST_F(FixtureTest, TimeTravelSchemaChange) {
  auto t = OpenFixture("spark/time-travel-schema-change");
  ASSERT_TRUE(t);
  auto v0 = *t->SnapshotAt(Version(0));
  auto b0 = t->Scan(*v0);
  ASSERT_TRUE(b0.ok()) << b0.status().ToString();
  EXPECT_THAT(testing::ColumnNames(*b0), ElementsAre("id"));
  EXPECT_EQ(Rows(*b0), Sorted(Range(0, 9)));
  auto latest = *t->Latest();
  auto b1 = t->Scan(*latest);
  ASSERT_TRUE(b1.ok()) << b1.status().ToString();
  EXPECT_THAT(testing::ColumnNames(*b1), ElementsAre("id", "part"));
  auto rows = Rows(*b1);
  EXPECT_EQ(rows.size(), 20u);
  for (int i = 0; i < 10; ++i) EXPECT_THAT(rows, ::testing::Contains(std::to_string(i) + "|NULL"));
  for (int i = 10; i < 20; ++i) {
    EXPECT_THAT(rows, ::testing::Contains(std::to_string(i) + "|" + std::to_string(i % 2)));
  }
}

TEST_F(FixtureTest, TimeTravelPartitionChange) {
  auto t = OpenFixture("spark/time-travel-partition-change");
  ASSERT_TRUE(t);
  auto v0 = *t->SnapshotAt(Version(0));
  EXPECT_EQ(v0->metadata.partition_columns, std::vector<std::string>{"part5"});
  auto b0 = t->Scan(*v0);
  ASSERT_TRUE(b0.ok()) << b0.status().ToString();
  EXPECT_THAT(testing::ColumnNames(*b0), ElementsAre("id", "part5"));
  std::vector<std::string> e0, e1;
  for (int i = 0; i < 10; ++i) e0.push_back(std::to_string(i) + "|" + std::to_string(i % 5));
  for (int i = 10; i < 20; ++i) e1.push_back(std::to_string(i) + "|" + std::to_string(i % 2));
  EXPECT_EQ(Rows(*b0), Sorted(e0));
  auto latest = *t->Latest();
  EXPECT_EQ(latest->metadata.partition_columns, std::vector<std::string>{"part2"});
  auto b1 = t->Scan(*latest);
  ASSERT_TRUE(b1.ok()) << b1.status().ToString();
  EXPECT_THAT(testing::ColumnNames(*b1), ElementsAre("id", "part2"));
  EXPECT_EQ(Rows(*b1), Sorted(e1));
}

// ---------------- spark: stats ----------------

TEST_F(FixtureTest, StatsAllTypes) {
  auto t = OpenFixture("spark/stats-all-types");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  ASSERT_EQ(snap->files.size(), 1u);
  auto count = [&](std::vector<ColumnPredicate> preds) -> std::pair<size_t, int64_t> {
    std::vector<AddFile> read;
    auto b = t->Scan(*snap, ScanFilter{preds}, &read);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return {read.size(), b.ok() ? b->num_rows() : -1};
  };
  // Matching predicates keep the file and return the row.
  EXPECT_EQ(count({{"as_int", CompareOp::kEq, "0"}}), std::make_pair(size_t{1}, int64_t{1}));
  EXPECT_EQ(count({{"as_string", CompareOp::kEq, "0"}, {"as_date", CompareOp::kEq, "2000-01-01"}}),
            std::make_pair(size_t{1}, int64_t{1}));
  // Written in a UTC session: the value is 2000-01-01T00:00:00Z.
  EXPECT_EQ(count({{"as_timestamp", CompareOp::kEq, "2000-01-01T00:00:00Z"}}),
            std::make_pair(size_t{1}, int64_t{1}));
  // Pruned by stats: no file is read.
  for (auto p :
       std::vector<ColumnPredicate>{{"as_int", CompareOp::kGt, "0"},
                                    {"as_long", CompareOp::kLt, "0"},
                                    {"as_byte", CompareOp::kEq, "1"},
                                    {"as_short", CompareOp::kGe, "1"},
                                    {"as_float", CompareOp::kGt, "0.5"},
                                    {"as_double", CompareOp::kLt, "-0.5"},
                                    {"as_string", CompareOp::kGt, "1"},
                                    {"as_date", CompareOp::kGt, "2000-01-01"},
                                    {"as_timestamp", CompareOp::kLt, "1999-12-31T23:00:00Z"},
                                    {"as_big_decimal", CompareOp::kEq, "1"},
                                    {"as_int", CompareOp::kIsNull, std::nullopt}}) {
    SCOPED_TRACE(p.column);
    EXPECT_EQ(count({p}), std::make_pair(size_t{0}, int64_t{0}));
  }
}

TEST_F(FixtureTest, StatsPruneFilesFromJsonAndCheckpoint) {
  // 15 appends of 10 ids each in two files of 5; checkpoint at v10 carries stats as JSON strings.
  auto t = OpenFixture("spark/basic-with-checkpoint");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  ASSERT_EQ(snap->files.size(), 30u);
  std::vector<AddFile> read;
  auto b = t->Scan(*snap, ScanFilter{{{"id", CompareOp::kGe, "140"}}}, &read);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(Rows(*b, {"id"}), Sorted(Range(140, 149)));
  // Only the two files of 140..149 are read.
  EXPECT_EQ(read.size(), 2u);
  for (const AddFile& f : read) EXPECT_THAT(*f.stats, HasSubstr("\"minValues\":{\"id\":14"));
  // A value inside one file's range reads only that file (v2 wrote 20..24 and 25..29).
  auto one = t->Scan(*snap, ScanFilter{{{"id", CompareOp::kEq, "25"}}}, &read);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(read.size(), 1u);
  EXPECT_EQ(Rows(*one, {"id"}), std::vector<std::string>{"25"});
}

TEST_F(FixtureTest, StatsAsStructAndUnknownActions) {
  // Checkpoint v2 has only stats_parsed (writeStatsAsJson=false); v3 carries unknown actions and
  // fields that a reader must ignore.
  auto t = OpenFixture("spark/stats-as-struct");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(3));
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->version, Version(2));
  EXPECT_EQ(snap->files.size(), 6u);
  std::vector<std::string> expected = {"10|10", "11|11"};
  for (int i = 1; i <= 9; ++i) {
    expected.push_back(std::to_string(i) + "|" + std::to_string(i));
    expected.push_back(std::to_string(i) + "|" + std::to_string(i));
  }
  EXPECT_EQ(LatestRows(t.get(), {"key", "value"}), Sorted(expected));
  size_t with_stats = 0;
  for (const AddFile& f : snap->files) with_stats += f.stats.has_value();
  EXPECT_EQ(with_stats, snap->files.size());
  std::vector<AddFile> read;
  auto b = t->Scan(*snap, ScanFilter{{{"key", CompareOp::kEq, "1"}}}, &read);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(Rows(*b, {"key"}), Sorted({"1", "1"}));
  EXPECT_EQ(read.size(), 2u);
}

// ---------------- spark: history, CDF, txn ----------------

TEST_F(FixtureTest, CdfInsertsOnlyAndOptimize) {
  auto t = OpenFixture("spark/cdf-optimize");
  ASSERT_TRUE(t);
  EXPECT_EQ(LatestRows(t.get(), {"id", "month"}), Sorted({"1|1", "2|2"}));
  auto history = t->History();
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  ASSERT_EQ(history->size(), 3u);
  ASSERT_TRUE(history->front().commit_info);
  EXPECT_EQ(history->front().commit_info->operation, std::optional<std::string>("OPTIMIZE"));
  EXPECT_EQ(history->back().commit_info->operation,
            std::optional<std::string>("CREATE TABLE AS SELECT"));
  auto changes = t->Changes(Version(0), Version(2));
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  EXPECT_EQ(Rows(*changes, {"id", "_change_type", "_commit_version"}),
            Sorted({"1|insert|0", "2|insert|1"}));
}

TEST_F(FixtureTest, CdfWithCdcFiles) {
  auto t = OpenFixture("spark/cdf-dml");
  ASSERT_TRUE(t);
  EXPECT_EQ(LatestRows(t.get(), {"id", "name", "part"}),
            Sorted({"2|u2|a", "3|m3|a", "4|n4|b", "6|n6|b", "7|n7|b"}));
  auto changes = t->Changes(Version(1));
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  EXPECT_EQ(Rows(*changes, {"id", "name", "part", "_change_type", "_commit_version"}),
            Sorted({"1|n1|a|insert|1", "2|n2|a|insert|1", "3|n3|a|insert|1", "4|n4|b|insert|1",
                    "5|n5|b|insert|1", "6|n6|b|insert|1", "2|n2|a|update_preimage|2",
                    "2|u2|a|update_postimage|2", "5|n5|b|delete|3", "3|n3|a|update_preimage|4",
                    "3|m3|a|update_postimage|4", "7|n7|b|insert|4", "1|n1|a|delete|5"}));
}

TEST_F(FixtureTest, TxnFromIdempotentWrites) {
  auto t = OpenFixture("spark/txn");
  ASSERT_TRUE(t);
  EXPECT_EQ((*t->Latest())->version, Version(2));  // the write with fakeAppId 2 was skipped
  EXPECT_EQ(*t->LatestTxnVersion("fakeAppId"), std::optional<int64_t>(3));
  EXPECT_EQ(*t->LatestTxnVersion("otherApp"), std::optional<int64_t>(7));
  EXPECT_EQ(*t->LatestTxnVersion("nonExistentAppId"), std::nullopt);
  EXPECT_EQ((*t->SnapshotAt(Version(0)))->TxnVersion("fakeAppId"), std::optional<int64_t>(1));
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted(Range(0, 5)));
}

TEST_F(FixtureTest, Protocol11) {
  auto t = OpenFixture("spark/protocol-1-1");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(3));
  EXPECT_EQ(snap->protocol.min_reader_version, 1);
  EXPECT_EQ(snap->protocol.min_writer_version, 1);
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->version, Version(3));
  EXPECT_EQ(snap->TxnVersion("txnId"), std::optional<int64_t>(0));
  auto b = t->Scan(*snap);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_THAT(testing::ColumnNames(*b), ElementsAre("id", "value"));
  EXPECT_EQ(b->schema()[0].type.id, engine::TypeId::kInteger);
  EXPECT_EQ(Rows(*b), Sorted({"4|d", "5|e", "6|f"}));
}

TEST_F(FixtureTest, EmptyTableScanHasSchemaColumns) {
  auto t = OpenFixture("spark/empty");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_TRUE(snap->files.empty());
  auto b = t->Scan(*snap);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->num_rows(), 0);
  EXPECT_EQ(b->num_columns(), snap->schema.fields.size());
  EXPECT_THAT(testing::ColumnNames(*b), ElementsAre("id", "name"));
}

// ---------------- spark: errors and refusals ----------------

TEST_F(FixtureTest, VersionsNotContiguous) {
  Status st = OpenError("spark/versions-not-contiguous");
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("versions are not contiguous: [0, 2]"));
}

TEST_F(FixtureTest, InvalidProtocolVersion) {
  Status st = OpenError("spark/invalid-protocol-version");
  EXPECT_TRUE(st.IsNotSupported()) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("Unsupported Delta protocol reader version 99"));
}

TEST_F(FixtureTest, UnknownReaderFeature) {
  Status st = OpenError("spark/unknown-reader-feature");
  EXPECT_TRUE(st.IsNotSupported()) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("Unsupported Delta reader feature 'blahabl'"));
}

// ---------------- deletion vectors ----------------

TEST_F(FixtureTest, DeletionVectorsDropTheDeletedRows) {
  auto t = OpenFixture("spark/deletion-vectors");
  ASSERT_TRUE(t);
  std::vector<std::string> expected;
  for (int i = 0; i < 50; ++i) {
    if (i != 0 && i != 7 && i != 14) expected.push_back(std::to_string(i));
  }
  EXPECT_EQ(LatestRows(t.get()), Sorted(expected));
  EXPECT_EQ(VersionRows(t.get(), 1).size(), 50u);  // before the DELETE
  auto snap = *t->Latest();
  ASSERT_EQ(snap->files.size(), 1u);
  ASSERT_TRUE(snap->files[0].deletion_vector);
  EXPECT_EQ(snap->files[0].deletion_vector->cardinality, 3);
  // The SQL of the scan (what SQL queries view) drops them too.
  auto sql = t->ScanSql(*snap);
  ASSERT_TRUE(sql.ok()) << sql.status().ToString();
  EXPECT_THAT(*sql, HasSubstr("file_row_number"));
}

TEST_F(FixtureTest, DeletionVectorsInACheckpoint) {
  auto t = OpenFixture("spark/deletion-vectors-checkpoint");
  ASSERT_TRUE(t);
  // Version 10 is read from the checkpoint alone: 9 DELETEs (x = 0, 2, ..., 16) are in its
  // adds' deletionVector column.
  auto at10 = t->SnapshotAt(Version(10));
  ASSERT_TRUE(at10.ok()) << at10.status().ToString();
  EXPECT_EQ((*at10)->segment.commits.size(), 0u);
  int files_with_dv = 0;
  int64_t deleted = 0;
  for (const AddFile& f : (*at10)->files) {
    files_with_dv += f.deletion_vector ? 1 : 0;
    deleted += f.deletion_vector ? f.deletion_vector->cardinality : 0;
  }
  EXPECT_EQ(files_with_dv, 5);  // partitions 0, 2, 4, 6, 8
  EXPECT_EQ(deleted, 9);
  EXPECT_EQ(ScanRows(t.get(), **at10).size(), 41u);
  std::vector<std::string> expected;
  for (int x = 0; x < 50; ++x) {
    if (x % 2 == 0 && x < 24) continue;
    expected.push_back(std::to_string(x) + "|" + std::to_string(x % 10) + "|foo" +
                       std::to_string(x % 5));
  }
  EXPECT_EQ(LatestRows(t.get(), {"x", "part", "s"}), Sorted(expected));
}

TEST_F(FixtureTest, DeletionVectorsWithBitmapRunAndArrayContainers) {
  auto t = OpenFixture("spark/deletion-vectors-large");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  ASSERT_EQ(snap->files.size(), 1u);
  ASSERT_TRUE(snap->files[0].deletion_vector);
  EXPECT_EQ(snap->files[0].deletion_vector->storage_type, "u");
  EXPECT_EQ(snap->files[0].deletion_vector->cardinality, 18715);
  auto b = t->Scan(*snap);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->num_rows(), 121285);
  // Exactly the rows the DELETE kept, counted per (g, m).
  std::map<std::string, int> count, expected;
  for (const std::string& row : Rows(*b, {"g", "m"})) ++count[row];
  for (int row = 0; row < 140000; ++row) {
    int g = row / 1000, m = row % 7;
    bool deleted = (m == 0 && g < 60) || (g >= 70 && g < 80) || (g == 135 && m == 3);
    if (!deleted) ++expected[std::to_string(g) + "|" + std::to_string(m)];
  }
  EXPECT_EQ(count, expected);
}

TEST_F(FixtureTest, DeletionVectorsChangeDataFeed) {
  auto t = OpenFixture("spark/deletion-vectors-dml");
  ASSERT_TRUE(t);
  // The DELETE (version 2) wrote no cdc file: its deletes come from the DV's new rows.
  auto deletes = t->Changes(Version(2), Version(2));
  ASSERT_TRUE(deletes.ok()) << deletes.status().ToString();
  EXPECT_EQ(Rows(*deletes, {"id", "v", "_change_type", "_commit_version"}),
            (std::vector<std::string>{"1|1|delete|2", "2|2|delete|2"}));
  // The UPDATE (version 3) has cdc files: only those are read, not the DV's new row.
  auto update = t->Changes(Version(3), Version(3));
  ASSERT_TRUE(update.ok()) << update.status().ToString();
  EXPECT_EQ(Rows(*update, {"id", "v", "_change_type"}),
            (std::vector<std::string>{"3|3|update_preimage", "3|u|update_postimage"}));
}

TEST_F(FixtureTest, CorruptDeletionVectorFailsTheScan) {
  TempDir tmp;
  std::string table = CopyFixture("spark/deletion-vectors", tmp);
  std::string dv = table + "/deletion_vector_faa9a331-7067-4729-b46d-a6043d8e37ab.bin";
  {
    std::fstream f(dv, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(30);
    f.put('\x7f');
  }
  auto t = Open(table);
  ASSERT_TRUE(t);
  auto snap = t->Latest();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  auto b = t->Scan(**snap);
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(b.status().IsCorruption()) << b.status().ToString();
  EXPECT_THAT(b.status().message(), HasSubstr(dv + " at offset 1: checksum mismatch"));
  std::filesystem::remove(dv);
  auto missing = t->Scan(**snap);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
}

// Column mapping tables (spark/column-mapping-*) are read: column_mapping_test.cc compares
// their rows, nested columns and pruned queries with Spark's.
TEST_F(FixtureTest, ReadsColumnMappingName) {
  auto t = OpenFixture("spark/column-mapping-name");
  ASSERT_TRUE(t);
  EXPECT_EQ(LatestRows(t.get()), (std::vector<std::string>{"1|a", "2|b", "3|c"}));
}

// V2 checkpoints (v2Checkpoint): the UUID-named top-level checkpoint and its sidecar files are
// read; with the commits before the checkpoint deleted, the rows can only come from them.
TEST_F(FixtureTest, ReadsV2CheckpointJson) {
  auto t = OpenFixture("spark/v2-checkpoint");
  ASSERT_TRUE(t);
  auto snap = t->Latest();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  ASSERT_TRUE((*snap)->segment.checkpoint);
  EXPECT_EQ((*snap)->segment.checkpoint->version, Version(2));
  EXPECT_EQ((*snap)->segment.checkpoint->files.front().name.kind, LogFileKind::kCheckpointV2);
  EXPECT_EQ(LatestRows(t.get()), Sorted(Range(0, 9)));
  // Only the checkpoint: commits 0 and 1 gone (2 stays, the checkpoint's own version).
  TempDir dir;
  std::string copy = CopyFixture("spark/v2-checkpoint", dir);
  for (const char* c : {"00000000000000000000.json", "00000000000000000001.json"}) {
    ASSERT_TRUE(fs::LocalFileSystem()->DeleteFile(copy + "/_delta_log/" + c).ok());
  }
  auto only = Open(copy);
  ASSERT_TRUE(only);
  EXPECT_EQ(LatestRows(only.get()), Sorted(Range(0, 9)));
  // A missing sidecar is an error naming it, never a table without its files.
  for (const auto& e : std::filesystem::directory_iterator(copy + "/_delta_log/_sidecars")) {
    std::filesystem::remove(e.path());
  }
  auto broken = DeltaTable::Open(fs::LocalFileSystem(), engine_, copy);
  Status st = broken.ok() ? (*broken)->Latest().status() : broken.status();
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("sidecar file"));
}

TEST_F(FixtureTest, ReadsV2CheckpointWithDeletionVectorsAndPartitions) {
  auto t = OpenFixture("spark/v2-checkpoint-parquet");
  ASSERT_TRUE(t);
  auto snap = t->Latest();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  ASSERT_TRUE((*snap)->segment.checkpoint);
  EXPECT_EQ((*snap)->segment.checkpoint->version, Version(3));
  EXPECT_EQ((*snap)->segment.checkpoint->files.front().name.kind, LogFileKind::kCheckpointV2);
  auto [columns, expected] = WriterRows(Summary("spark/v2-checkpoint-parquet")["rows"]);
  EXPECT_EQ(LatestRows(t.get(), columns), expected);
  EXPECT_EQ(expected.size(), 22u);
  TempDir dir;
  std::string copy = CopyFixture("spark/v2-checkpoint-parquet", dir);
  for (int v = 0; v < 3; ++v) {
    ASSERT_TRUE(
        fs::LocalFileSystem()->DeleteFile(copy + "/_delta_log/" + CommitFileName(Version(v))).ok());
  }
  auto only = Open(copy);
  ASSERT_TRUE(only);
  EXPECT_EQ(LatestRows(only.get(), columns), expected);
  EXPECT_EQ(VersionRows(only.get(), 3, {"id"}).size(), 17u);  // v4 appended 5 rows
}

// timestamp_ntz columns (timestampNtz) are read as TIMESTAMP, no time zone.
TEST_F(FixtureTest, ReadsTimestampNtz) {
  auto t = OpenFixture("spark/timestamp-ntz");
  ASSERT_TRUE(t);
  auto snap = t->Latest();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  const engine::Field* ts = FindField((*snap)->schema.fields, "ts");
  ASSERT_NE(ts, nullptr);
  EXPECT_EQ(ts->type.id, engine::TypeId::kTimestamp);
  EXPECT_EQ(LatestRows(t.get()), Sorted({"1|2021-01-01 10:00:00", "2|NULL"}));
}

// Type widening (typeWidening): the v1 file holds int32 / int16 / float / decimal(5,2) / a byte
// partition value, read as the widened bigint / int / double / decimal(10,4) / smallint.
TEST_F(FixtureTest, ReadsTypeWidenedColumns) {
  auto t = OpenFixture("spark/type-widening");
  ASSERT_TRUE(t);
  auto snap = t->Latest();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  std::vector<std::string> types;
  for (const engine::Field& f : (*snap)->schema.fields) types.push_back(f.type.ToSql());
  EXPECT_EQ(types,
            (std::vector<std::string>{"BIGINT", "INTEGER", "DOUBLE", "DECIMAL(10,4)", "SMALLINT"}));
  EXPECT_EQ(LatestRows(t.get(), {"id", "s", "f", "dec", "b"}),
            Sorted({"1|2|1.5|1.2500|3", "5000000000|100000|2.5|123456.1234|1000"}));
  auto [columns, expected] = WriterRows(Summary("spark/type-widening")["rows"]);
  EXPECT_EQ(LatestRows(t.get(), columns), expected);
  // Before the widening (v1) the table's types were the narrow ones.
  EXPECT_EQ(VersionRows(t.get(), 1, {"id", "s", "f", "dec", "b"}),
            (std::vector<std::string>{"1|2|1.5|1.25|3"}));
  // Data skipping on the widened column: the old file's int stats against a bigint literal.
  auto rows = t->Scan(**snap, ScanFilter{{{"id", CompareOp::kGt, std::string("4000000000")}}});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(Rows(*rows, {"id"}), (std::vector<std::string>{"5000000000"}));
}

// ---------------- delta-rs fixtures ----------------

TEST_F(FixtureTest, RsSimpleTable) {
  auto t = OpenFixture("deltars/simple_table");
  ASSERT_TRUE(t);
  EXPECT_EQ((*t->Latest())->version, Version(4));  // .tmp/00000000000000000005.json is ignored
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted({"5", "7", "9"}));
  EXPECT_EQ(VersionRows(t.get(), 0, {"id"}), Sorted(Range(0, 4)));
  EXPECT_EQ(VersionRows(t.get(), 1, {"id"}), Sorted(Range(0, 9)));
  EXPECT_EQ(VersionRows(t.get(), 2, {"id"}), Sorted(Range(5, 9)));
  EXPECT_EQ(VersionRows(t.get(), 3, {"id"}), Sorted(Concat(Range(5, 9), {"106", "108"})));
  EXPECT_EQ(VersionRows(t.get(), 4, {"id"}), Sorted({"5", "7", "9"}));
  nlohmann::json s = Summary("deltars/simple_table");
  for (int v = 0; v <= 4; ++v) {
    EXPECT_EQ(LiveRelativeFiles(**t->SnapshotAt(Version(v))),
              SummaryList(s["files_by_version"][std::to_string(v)]))
        << v;
  }
  auto cdf = t->Changes(Version(0), Version(4));
  ASSERT_FALSE(cdf.ok());
  EXPECT_THAT(cdf.status().message(), HasSubstr("change data was not recorded for version [0]"));
}

TEST_F(FixtureTest, RsSimpleTableTimeTravel) {
  TempDir tmp;
  std::string path = CopyFixture("deltars/simple_table", tmp);
  for (int v = 0; v <= 4; ++v) {
    char day[64];
    std::snprintf(day, sizeof(day), "2020-05-0%dT22:47:31-07:00", v + 1);
    Touch(path, CommitFileName(Version(v)), IsoMillis(day));
  }
  Touch(path, ".tmp/00000000000000000005.json", IsoMillis("2020-05-06T22:47:31-07:00"));
  auto t = Open(path);
  ASSERT_TRUE(t);
  struct Case {
    const char* ts;
    int64_t version;
  } cases[] = {{"2020-05-02T22:47:31-07:00", 1}, {"2020-05-02T23:47:31-07:00", 1},
               {"2020-05-03T22:47:31-07:00", 2}, {"2020-05-04T22:47:31-07:00", 3},
               {"2020-05-05T21:47:31-07:00", 3}, {"2020-05-05T22:47:31-07:00", 4}};
  for (const Case& c : cases) {
    auto v = t->VersionAtTimestamp(IsoMillis(c.ts));
    ASSERT_TRUE(v.ok()) << c.ts << ": " << v.status().ToString();
    EXPECT_EQ(*v, Version(c.version)) << c.ts;
  }
  // Spark rules (not delta-rs's): before v0 and after v4 are errors.
  auto before = t->VersionAtTimestamp(IsoMillis("2020-05-01T00:47:31-07:00"));
  EXPECT_THAT(before.status().message(), HasSubstr("before the earliest available version 0"));
  auto after = t->VersionAtTimestamp(IsoMillis("2020-05-25T22:47:31-07:00"));
  EXPECT_THAT(after.status().message(), HasSubstr("after the latest available version 4"));
}

TEST_F(FixtureTest, RsSimpleTableWithCheckpoint) {
  auto t = OpenFixture("deltars/simple_table_with_checkpoint");
  ASSERT_TRUE(t);
  auto latest = *t->Latest();
  EXPECT_EQ(latest->version, Version(10));
  ASSERT_TRUE(latest->segment.checkpoint);
  EXPECT_EQ(latest->segment.checkpoint->version, Version(10));
  EXPECT_EQ(LatestRows(t.get(), {"version"}), Sorted(Range(0, 10)));
  // Loading v0 then updating gives the same files as loading latest.
  LogListing listing =
      *ListLog(fs::LocalFileSystem().get(), Fixture("deltars/simple_table_with_checkpoint"));
  auto v0 = *t->SnapshotAt(Version(0));
  auto updated = UpdateSnapshot(fs::LocalFileSystem().get(), listing, *v0, Version(10));
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  auto serialize = [](const std::vector<AddFile>& files) {
    std::vector<std::string> out;
    for (AddFile f : files) {
      f.data_change = true;  // checkpoints store dataChange=false; the file state is the same
      out.push_back(SerializeAction(f));
    }
    return out;
  };
  EXPECT_EQ(serialize((*updated)->files), serialize(latest->files));
  EXPECT_EQ((*updated)->metadata, latest->metadata);
  auto history = t->History(5);
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(history->size(), 5u);
  EXPECT_EQ(history->front().version, Version(10));
}

TEST_F(FixtureTest, RsPartitionedByDate) {
  auto t = OpenFixture("deltars/partitioned-by-date");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(12));
  EXPECT_FALSE(snap->segment.checkpoint);
  EXPECT_EQ(snap->files.size(), 13u);
  EXPECT_EQ(snap->metadata.partition_columns, std::vector<std::string>{"date"});
  std::vector<std::string> names;
  for (const auto& f : snap->schema.fields) names.push_back(f.name);
  EXPECT_THAT(names, ElementsAre("some_struct", "value", "ts", "date"));
  EXPECT_THAT(LatestRows(t.get(), {"value", "date", "ts"}),
              ::testing::Contains("12|2020-05-13|2020-05-13 00:00:00+00"));
}

TEST_F(FixtureTest, RsCheckpointsVacuumed) {
  TempDir tmp;
  std::string path = CopyFixture("deltars/checkpoints_vacuumed", tmp);
  const std::pair<const char*, const char*> mtimes[] = {
      {"00000000000000000005.checkpoint.parquet", "2020-05-01T22:47:31-07:00"},
      {"00000000000000000005.json", "2020-05-02T22:47:31-07:00"},
      {"00000000000000000006.json", "2020-05-03T22:47:31-07:00"},
      {"00000000000000000007.json", "2020-05-04T22:47:31-07:00"},
      {"00000000000000000008.json", "2020-05-05T22:47:31-07:00"},
      {"00000000000000000009.json", "2020-05-06T22:47:31-07:00"},
      {"00000000000000000010.checkpoint.parquet", "2020-05-06T22:47:31-07:00"},
      {"00000000000000000010.json", "2020-05-08T22:47:31-07:00"},
      {"00000000000000000011.json", "2020-05-09T22:47:31-07:00"},
      {"00000000000000000012.json", "2020-05-10T22:47:31-07:00"}};
  for (const auto& [name, ts] : mtimes) Touch(path, name, IsoMillis(ts));
  EXPECT_FALSE(std::filesystem::exists(path + "/_delta_log/_last_checkpoint"));
  EXPECT_FALSE(std::filesystem::exists(path + "/_delta_log/00000000000000000004.json"));
  // A stray temporary checkpoint must not break anything.
  ASSERT_TRUE(fs::LocalFileSystem()
                  ->CreateIfAbsent(
                      path + "/_delta_log/00000000000000000000.checkpoint.parquet.tmpXYZ", "junk")
                  .ok());
  auto t = Open(path);
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(12));
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->version, Version(10));
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted(Range(0, 12)));
  auto history = t->History(10);
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  EXPECT_EQ(history->size(), 8u);
  EXPECT_EQ(*t->VersionAtTimestamp(IsoMillis("2020-05-09T00:47:31-07:00")), Version(10));
  // v5 is the earliest recreatable version (from its checkpoint); older versions are gone.
  EXPECT_TRUE(t->SnapshotAt(Version(5)).ok());
  auto v4 = t->SnapshotAt(Version(4));
  ASSERT_FALSE(v4.ok());
  EXPECT_THAT(v4.status().message(), HasSubstr("Available versions: [5, 12]"));
  // Spark semantics: a timestamp before 5.json's commit time is before the earliest version
  // (delta-rs returns v5 here).
  auto early = t->VersionAtTimestamp(IsoMillis("2020-05-02T00:47:31-07:00"));
  EXPECT_THAT(early.status().message(), HasSubstr("before the earliest available version 5"));
}

TEST_F(FixtureTest, RsCdfTable) {
  TempDir tmp;
  std::string path = CopyFixture("deltars/cdf-table", tmp);
  // delta-rs uses commitInfo.timestamp; Sluice uses file times (Spark): set them.
  const int64_t ts[] = {1703265018828, 1703265021675, 1703886093785, 1704559499570};
  for (int v = 0; v < 4; ++v) Touch(path, CommitFileName(Version(v)), ts[v]);
  auto t = Open(path);
  ASSERT_TRUE(t);
  auto changes = t->Changes(Version(0));
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  EXPECT_THAT(testing::ColumnNames(*changes), ElementsAre("id", "name", "birthday", "_change_type",
                                                          "_commit_version", "_commit_timestamp"));
  auto rows = Rows(
      *changes, {"id", "name", "birthday", "_change_type", "_commit_version", "_commit_timestamp"});
  EXPECT_EQ(rows.size(), 23u);
  // delta-rs's own CDF rows (the summary, without _commit_timestamp) are Sluice's.
  std::vector<std::string> theirs;
  const nlohmann::json summary = Summary("deltars/cdf-table");
  ASSERT_EQ(summary["cdf"].size(), 23u);
  for (const auto& r : summary["cdf"]) {
    nlohmann::json row = nlohmann::json::parse(r.get<std::string>());
    theirs.push_back(std::to_string(row["id"].get<int>()) + "|" + row["name"].get<std::string>() +
                     "|" + row["birthday"].get<std::string>() + "|" +
                     row["_change_type"].get<std::string>() + "|" +
                     std::to_string(row["_commit_version"].get<int>()));
  }
  EXPECT_EQ(Rows(*changes, {"id", "name", "birthday", "_change_type", "_commit_version"}),
            Sorted(theirs));
  EXPECT_EQ(Rows(*changes, {"id", "_change_type", "_commit_version"}),
            Sorted({"1|insert|0",          "2|insert|0",
                    "3|insert|0",          "4|insert|0",
                    "5|insert|0",          "6|insert|0",
                    "7|insert|0",          "8|insert|0",
                    "9|insert|0",          "10|insert|0",
                    "2|update_preimage|1", "2|update_postimage|1",
                    "3|update_preimage|1", "3|update_postimage|1",
                    "4|update_preimage|1", "4|update_postimage|1",
                    "5|update_preimage|2", "5|update_postimage|2",
                    "6|update_preimage|2", "6|update_postimage|2",
                    "7|update_preimage|2", "7|update_postimage|2",
                    "7|delete|3"}));
  EXPECT_THAT(rows, ::testing::Contains(HasSubstr("|insert|0|2023-12-22 17:10:18.828+00")));
  EXPECT_THAT(rows, ::testing::Contains(HasSubstr("|delete|3|2024-01-06 16:44:59.57+00")));
  // Range errors as Spark.
  auto bad_start = t->Changes(Version(5));
  EXPECT_THAT(bad_start.status().message(),
              HasSubstr("Start version cannot be greater than the latest version"));
  auto bad_range = t->Changes(Version(3), Version(1));
  EXPECT_THAT(bad_range.status().message(), HasSubstr("End cannot be before start"));
  // By timestamps: [v1's time, v2's time] covers versions 1..2 (12 update rows).
  auto by_ts = t->ChangesBetweenTimestamps(ts[1], ts[2]);
  ASSERT_TRUE(by_ts.ok()) << by_ts.status().ToString();
  EXPECT_EQ(by_ts->num_rows(), 12);
  auto by_ts_after = t->ChangesBetweenTimestamps(ts[3] + 1);
  EXPECT_THAT(by_ts_after.status().message(), HasSubstr("after the latest available version 3"));
  auto only_v3 = t->Changes(Version(3), Version(3));
  ASSERT_TRUE(only_v3.ok());
  EXPECT_EQ(Rows(*only_v3, {"id", "name", "_change_type"}),
            std::vector<std::string>{"7|Upd2|delete"});
}

TEST_F(FixtureTest, RsSimpleTableWithCdc) {
  auto t = OpenFixture("deltars/simple_table_with_cdc");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  ASSERT_EQ(snap->files.size(), 1u);
  auto v1 = *t->SnapshotAt(Version(1));
  ASSERT_EQ(v1->files.size(), 1u);
  EXPECT_NE(snap->files[0].path, v1->files[0].path);
  EXPECT_EQ(LivePaths(*snap),
            SummaryList(Summary("deltars/simple_table_with_cdc")["files_by_version"]["2"]));
  EXPECT_EQ(LatestRows(t.get()), std::vector<std::string>{"0|Mino"});
  auto changes = t->Changes(Version(0));
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  EXPECT_EQ(Rows(*changes, {"id", "name", "_change_type", "_commit_version"}),
            Sorted({"0|Ana|insert|1", "0|Ana|update_preimage|2", "0|Mino|update_postimage|2"}));
}

TEST_F(FixtureTest, RsMergeCdf) {
  auto t = OpenFixture("deltars/merge-cdf");
  ASSERT_TRUE(t);
  EXPECT_EQ(LatestRows(t.get(), {"id", "v"}), Sorted({"2|b2", "3|a3", "4|a4", "5|b5"}));
  auto history = t->History();
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 3u);
  EXPECT_EQ(history->at(1).commit_info->operation, std::optional<std::string>("MERGE"));
  auto changes = t->Changes(Version(0));
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  EXPECT_EQ(Rows(*changes, {"id", "v", "_change_type", "_commit_version"}),
            Sorted({"1|a1|insert|0", "2|a2|insert|0", "3|a3|insert|0", "4|a4|insert|0",
                    "2|a2|update_preimage|1", "2|b2|update_postimage|1", "5|b5|insert|1",
                    "1|a1|delete|2"}));
}

TEST_F(FixtureTest, RsTxnCheckpoint) {
  auto t = OpenFixture("deltars/txn-checkpoint");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(3));
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->version, Version(3));
  nlohmann::json s = Summary("deltars/txn-checkpoint");
  EXPECT_EQ(LivePaths(*snap), SummaryList(s["files_by_version"]["3"]));
  EXPECT_EQ(snap->files.size(), 2u);
  EXPECT_EQ(snap->tombstones.size(), 2u);
  EXPECT_EQ(snap->TxnVersion("e4a20b59-dd0e-4c50-b074-e8ae4786df30"), std::optional<int64_t>(0));
  EXPECT_EQ(s["txn"]["e4a20b59-dd0e-4c50-b074-e8ae4786df30"], 0);
  EXPECT_EQ(LatestRows(t.get(), {"value"}), Sorted({"1", "1", "2", "2", "3", "3"}));
  EXPECT_EQ(VersionRows(t.get(), 2, {"value"}), Sorted({"1", "2", "3"}));
  EXPECT_EQ(VersionRows(t.get(), 0, {"value"}), std::vector<std::string>{"9"});
  EXPECT_EQ(LivePaths(**t->SnapshotAt(Version(0))), SummaryList(s["files_by_version"]["0"]));
}

TEST_F(FixtureTest, RsPartitioned) {
  auto t = OpenFixture("deltars/partitioned");
  ASSERT_TRUE(t);
  EXPECT_EQ(LatestRows(t.get(), {"value"}), Sorted(Range(1, 7)));
  EXPECT_EQ(LatestRows(t.get(), {"value", "year", "month", "day"}),
            Sorted({"1|2020|1|1", "2|2020|2|3", "3|2020|2|5", "4|2021|4|5", "5|2021|12|4",
                    "6|2021|12|20", "7|2021|12|20"}));
  // Partition pruning: only the year=2021/month=12 files are read.
  auto snap = *t->Latest();
  EXPECT_EQ(snap->files.size(), 6u);
  std::vector<AddFile> read;
  auto b = t->Scan(*snap,
                   ScanFilter{{{"year", CompareOp::kEq, "2021"}, {"month", CompareOp::kEq, "12"}}},
                   &read);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(read.size(), 2u);
  EXPECT_EQ(Rows(*b, {"value"}), Sorted({"5", "6", "7"}));
  // Filter that no partition satisfies: nothing is read.
  read.clear();
  auto none = t->Scan(*snap, ScanFilter{{{"year", CompareOp::kGt, "2021"}}}, &read);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(read.empty());
  EXPECT_EQ(none->num_rows(), 0);
}

TEST_F(FixtureTest, RsSimpleTableFeaturesRefused) {
  Status st = OpenError("deltars/simple_table_features");
  EXPECT_TRUE(st.IsNotSupported()) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("Unsupported Delta protocol reader version 5"));
  EXPECT_THAT(st.message(), HasSubstr("blahabl"));
}

// ---------------- corrupt logs and snapshot caching on copies ----------------

TEST_F(FixtureTest, CorruptCommitLineNamesFileAndLine) {
  TempDir tmp;
  std::string path = CopyFixture("spark/snapshot-data0", tmp);
  ASSERT_TRUE(fs::LocalFileSystem()
                  ->CreateIfAbsent(path + "/_delta_log/00000000000000000001.json",
                                   "{\"txn\":{\"appId\":\"a\",\"version\":1}}\n{not json\n")
                  .ok());
  auto t = DeltaTable::Open(fs::LocalFileSystem(), engine_, path);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(t.status().IsCorruption()) << t.status().ToString();
  EXPECT_THAT(t.status().message(), HasSubstr("00000000000000000001.json line 2"));
}

TEST_F(FixtureTest, NotADeltaTable) {
  TempDir tmp;
  auto t = DeltaTable::Open(fs::LocalFileSystem(), engine_, tmp.path());
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(t.status().IsNotFound());
  EXPECT_THAT(t.status().message(), HasSubstr("not a Delta table"));
}

// ---------------- commit timestamps on generated logs ----------------

std::string LogOnlyCommit(int64_t v, std::optional<int64_t> ict, bool enable_ict) {
  std::vector<Action> actions;
  CommitInfo ci;
  ci.timestamp = 1;
  ci.operation = "WRITE";
  ci.in_commit_timestamp = ict;
  actions.push_back(ci);
  if (v == 0) {
    actions.push_back(Protocol{});
    Metadata m;
    m.id = "t";
    m.schema_string =
        R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]})";
    if (enable_ict) m.configuration["delta.enableInCommitTimestamps"] = "true";
    actions.push_back(m);
  }
  AddFile a;
  a.path = "f" + std::to_string(v);
  a.size = 1;
  a.modification_time = 1;
  actions.push_back(a);
  return SerializeCommit(actions);
}

TEST_F(FixtureTest, FileTimesAreMonotonized) {
  TempDir tmp;
  auto lfs = fs::LocalFileSystem();
  for (int v = 0; v < 3; ++v) {
    ASSERT_TRUE(lfs->CreateIfAbsent(tmp.path() + "/_delta_log/" + CommitFileName(Version(v)),
                                    LogOnlyCommit(v, std::nullopt, false))
                    .ok());
  }
  // v1's file time goes backwards: it becomes ts(v0) + 1 ms.
  Touch(tmp.path(), CommitFileName(Version(0)), 10000);
  Touch(tmp.path(), CommitFileName(Version(1)), 5000);
  Touch(tmp.path(), CommitFileName(Version(2)), 20000);
  auto t = Open(tmp.path());
  ASSERT_TRUE(t);
  auto ts = t->CommitTimestamps();
  ASSERT_TRUE(ts.ok());
  ASSERT_EQ(ts->size(), 3u);
  EXPECT_EQ((*ts)[1].timestamp_ms, 10001);
  EXPECT_EQ(*t->VersionAtTimestamp(10000), Version(0));
  EXPECT_EQ(*t->VersionAtTimestamp(10001), Version(1));
  EXPECT_EQ(*t->VersionAtTimestamp(19999), Version(1));
}

TEST_F(FixtureTest, InCommitTimestampsWinOverFileTimes) {
  TempDir tmp;
  auto lfs = fs::LocalFileSystem();
  const int64_t ict[] = {1000, 2000, 3000};
  for (int v = 0; v < 3; ++v) {
    ASSERT_TRUE(lfs->CreateIfAbsent(tmp.path() + "/_delta_log/" + CommitFileName(Version(v)),
                                    LogOnlyCommit(v, ict[v], true))
                    .ok());
    Touch(tmp.path(), CommitFileName(Version(v)), 99999999 - v);  // file times are ignored
  }
  auto t = Open(tmp.path());
  ASSERT_TRUE(t);
  EXPECT_EQ((*t->Latest())->timestamp_ms, 3000);
  EXPECT_EQ(*t->VersionAtTimestamp(1999), Version(0));
  EXPECT_EQ(*t->VersionAtTimestamp(2000), Version(1));
  EXPECT_THAT(t->VersionAtTimestamp(3001).status().message(),
              HasSubstr("after the latest available version 2"));
}

// ---------------- snapshot caching ----------------

TEST_F(FixtureTest, OpenReadsOnlyNewestCheckpointAndLaterCommits) {
  auto counting = std::make_shared<testing::CountingFileSystem>(fs::LocalFileSystem());
  std::string path = Fixture("spark/basic-with-checkpoint");
  auto t = DeltaTable::Open(counting, engine_, path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto snap = *(*t)->Latest();
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->version, Version(10));
  // Only commits 11..14 were read through the file system (the checkpoint goes to the engine).
  std::set<std::string> read;
  for (const auto& [p, n] : counting->reads()) {
    read.insert(p.substr(p.find_last_of('/') + 1));
    EXPECT_EQ(n, 1) << p;
  }
  EXPECT_EQ(read, (std::set<std::string>{"_last_checkpoint", "00000000000000000011.json",
                                         "00000000000000000012.json", "00000000000000000013.json",
                                         "00000000000000000014.json"}));
  // The listing started at the checkpoint named by _last_checkpoint: versions 0..9 were not
  // even listed.
  for (const std::string& name : counting->listed()) {
    auto parsed = ParseLogFileName(name);
    if (parsed) {
      EXPECT_GE(parsed->version, Version(10)) << name;
    }
  }
  EXPECT_TRUE(counting->listed().count("00000000000000000014.json"));
  // A second Latest() with nothing new reads nothing.
  counting->Reset();
  ASSERT_TRUE((*t)->Latest().ok());
  EXPECT_TRUE(counting->reads().empty());
}

TEST_F(FixtureTest, LatestAppliesOnlyNewCommits) {
  TempDir tmp;
  std::string path = CopyFixture("spark/snapshot-data0", tmp);
  auto counting = std::make_shared<testing::CountingFileSystem>(fs::LocalFileSystem());
  auto t = DeltaTable::Open(counting, engine_, path);
  ASSERT_TRUE(t.ok());
  // Append a commit that removes one file.
  auto snap0 = *(*t)->Latest();
  RemoveFile rm;
  rm.path = snap0->files[0].path;
  rm.deletion_timestamp = 1;
  std::string commit = SerializeCommit({Action(rm)});
  ASSERT_TRUE(fs::LocalFileSystem()
                  ->CreateIfAbsent(path + "/_delta_log/00000000000000000001.json", commit)
                  .ok());
  counting->Reset();
  auto snap1 = (*t)->Latest();
  ASSERT_TRUE(snap1.ok()) << snap1.status().ToString();
  EXPECT_EQ((*snap1)->version, Version(1));
  EXPECT_EQ((*snap1)->files.size(), 1u);
  EXPECT_EQ(counting->reads().size(), 1u);  // only 1.json
  EXPECT_EQ(ScanRows(t->get(), **snap1).size(), 5u);
}

}  // namespace
}  // namespace sluice::delta
