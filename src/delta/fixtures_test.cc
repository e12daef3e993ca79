// Reads every table in shared/fixtures/delta and checks it against FIXTURES.md.
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delta/changes.h"
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
  const std::set<std::string> covered = {
      "golden/125-iterator-bug",
      "golden/basic-with-inserts-deletes-checkpoint",
      "golden/basic-with-inserts-overwrite-restore",
      "golden/basic-with-inserts-updates",
      "golden/checkpoint",
      "golden/commit-info-containing-arbitrary-operationParams-types",
      "golden/corrupted-last-checkpoint-kernel",
      "golden/data-reader-escaped-chars",
      "golden/data-reader-partition-values",
      "golden/data-reader-primitives",
      "golden/data-skipping-basic-stats-all-types",
      "golden/delete-re-add-same-file-different-transactions",
      "golden/deltalog-getChanges",
      "golden/deltalog-invalid-protocol-version",
      "golden/dv-partitioned-with-checkpoint",
      "golden/kernel-basic-with-checkpoint",
      "golden/kernel-timestamp-INT96",
      "golden/kernel-timestamp-partition-col-ISO8601",
      "golden/log-replay-dv-key-cases",
      "golden/multi-part-checkpoint",
      "golden/only-checkpoint-files",
      "golden/snapshot-data0",
      "golden/snapshot-data2",
      "golden/snapshot-data2-deleted",
      "golden/snapshot-repartitioned",
      "golden/snapshot-vacuumed",
      "golden/spark-delta-0.1.0",
      "golden/spark-transaction_log_schema_evolvability",
      "golden/table-with-columnmapping-mode-name",
      "golden/time-travel-partition-changes-b",
      "golden/time-travel-schema-changes-b",
      "golden/time-travel-start-start20-start40",
      "golden/v2-checkpoint-json",
      "golden/versions-not-contiguous",
      "deltars/cdf-table",
      "deltars/checkpoints",
      "deltars/checkpoints_vacuumed",
      "deltars/delta-0.2.0",
      "deltars/delta-0.8.0-partitioned",
      "deltars/simple_table",
      "deltars/simple_table_features",
      "deltars/simple_table_with_cdc",
      "deltars/simple_table_with_checkpoint",
      "deltars/table-with-dv-small",
      "deltars/table_failed_last_checkpoint_update"};
  int seen = 0;
  for (const char* group : {"golden", "deltars"}) {
    for (const auto& e : std::filesystem::directory_iterator(Fixture(group))) {
      if (!e.is_directory()) continue;
      std::string name = std::string(group) + "/" + e.path().filename().string();
      EXPECT_TRUE(covered.count(name)) << "fixture without a test: " << name;
      ++seen;
    }
  }
  EXPECT_EQ(seen, static_cast<int>(covered.size()));
}

// ---------------- golden: tables a (1,2) reader must read ----------------

TEST_F(FixtureTest, SnapshotData0) {
  auto t = OpenFixture("golden/snapshot-data0");
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
  for (const auto& e : std::filesystem::directory_iterator(Fixture("golden/snapshot-data0"))) {
    if (e.path().extension() == ".parquet") on_disk.push_back(e.path().filename().string());
  }
  EXPECT_EQ(LivePaths(*snap), Sorted(on_disk));
}

TEST_F(FixtureTest, SnapshotData2) {
  auto t = OpenFixture("golden/snapshot-data2");
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
  auto t = OpenFixture("golden/snapshot-data2-deleted");
  ASSERT_TRUE(t);
  EXPECT_EQ((*t->Latest())->version, Version(4));
  auto rows = LatestRows(t.get(), {"col2"});
  ASSERT_EQ(rows.size(), 20u);
  for (const auto& r : rows) EXPECT_THAT(r, HasSubstr("data-3-"));
}

TEST_F(FixtureTest, SnapshotRepartitionedAndVacuumed) {
  for (const char* name : {"golden/snapshot-repartitioned", "golden/snapshot-vacuumed"}) {
    SCOPED_TRACE(name);
    auto t = OpenFixture(name);
    ASSERT_TRUE(t);
    auto snap = *t->Latest();
    EXPECT_EQ(snap->version, Version(5));
    EXPECT_EQ(snap->files.size(), 2u);
    for (const AddFile& f : snap->files) EXPECT_FALSE(f.data_change);
    auto rows = LatestRows(t.get(), {"col2"});
    ASSERT_EQ(rows.size(), 20u);
    for (const auto& r : rows) EXPECT_THAT(r, HasSubstr("data-3-"));
  }
}

TEST_F(FixtureTest, CheckpointLogOnly) {
  auto t = OpenFixture("golden/checkpoint");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(14));
  ASSERT_TRUE(snap->segment.checkpoint.has_value());
  EXPECT_EQ(snap->segment.checkpoint->version, Version(10));
  EXPECT_EQ(snap->segment.commits.size(), 4u);  // 11..14
  EXPECT_THAT(LivePaths(*snap), ElementsAre("15"));
}

TEST_F(FixtureTest, BasicWithInsertsDeletesCheckpoint) {
  auto t = OpenFixture("golden/basic-with-inserts-deletes-checkpoint");
  ASSERT_TRUE(t);
  EXPECT_EQ((*t->Latest())->version, Version(13));
  std::vector<std::string> ids;
  for (int b : {0, 10, 20, 30, 40}) {
    for (int i = b; i < b + 5; ++i) ids.push_back(std::to_string(i));
  }
  for (int i = 50; i <= 65; ++i) ids.push_back(std::to_string(i));
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted(ids));
}

TEST_F(FixtureTest, BasicWithInsertsUpdates) {
  auto t = OpenFixture("golden/basic-with-inserts-updates");
  ASSERT_TRUE(t);
  std::vector<std::string> expected;
  for (int i = 0; i < 100; ++i)
    expected.push_back(std::to_string(i) + "|" + (i < 50 ? "N/A" : "val=" + std::to_string(i)));
  EXPECT_EQ(LatestRows(t.get(), {"id", "str"}), Sorted(expected));
}

TEST_F(FixtureTest, BasicWithInsertsOverwriteRestore) {
  auto t = OpenFixture("golden/basic-with-inserts-overwrite-restore");
  ASSERT_TRUE(t);
  EXPECT_EQ((*t->Latest())->version, Version(3));
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted(Range(0, 199)));
}

TEST_F(FixtureTest, OnlyCheckpointFiles) {
  auto t = OpenFixture("golden/only-checkpoint-files");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->version, snap->version);
  EXPECT_TRUE(snap->segment.commits.empty());  // no JSON needed
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted(Concat(Range(5, 9), Range(0, 19))));
}

TEST_F(FixtureTest, MultiPartCheckpoint) {
  auto t = OpenFixture("golden/multi-part-checkpoint");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->files.size(), 2u);
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted(Concat({"0"}, Range(0, 29))));
}

TEST_F(FixtureTest, CorruptedLastCheckpoint) {
  auto t = OpenFixture("golden/corrupted-last-checkpoint-kernel");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->version, Version(10));
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted(Range(0, 99)));
}

TEST_F(FixtureTest, IteratorBug125EmptyFiles) {
  auto t = OpenFixture("golden/125-iterator-bug");
  ASSERT_TRUE(t);
  EXPECT_EQ(LatestRows(t.get(), {"col1"}), Sorted(Range(1, 5)));
}

TEST_F(FixtureTest, DataReaderPrimitives) {
  auto t = OpenFixture("golden/data-reader-primitives");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  auto b = t->Scan(*snap);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->num_rows(), 11);
  EXPECT_THAT(testing::ColumnNames(*b),
              ElementsAre("as_int", "as_long", "as_byte", "as_short", "as_boolean", "as_float",
                          "as_double", "as_string", "as_binary", "as_big_decimal"));
  std::vector<std::string> expected = {"NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL"};
  for (int i = 0; i < 10; ++i) {
    std::string s = std::to_string(i);
    expected.push_back(s + "|" + s + "|" + s + "|" + s + "|" + (i % 2 == 0 ? "true" : "false") +
                       "|" + s + ".0|" + s + ".0|" + s + "|" + s);
  }
  EXPECT_EQ(Rows(*b, {"as_int", "as_long", "as_byte", "as_short", "as_boolean", "as_float",
                      "as_double", "as_string", "as_big_decimal"}),
            Sorted(expected));
  // binary [i, i]
  auto bin = Rows(*b, {"as_int", "as_binary"});
  EXPECT_THAT(bin, ::testing::Contains("1|\\x01\\x01"));
}

TEST_F(FixtureTest, DataReaderPartitionValues) {
  auto t = OpenFixture("golden/data-reader-partition-values");
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
  // Nested data columns are read too.
  auto nested = Rows(*b, {"as_int", "as_nested_struct"});
  EXPECT_EQ(nested.size(), 3u);
}

TEST_F(FixtureTest, DataReaderEscapedChars) {
  auto t = OpenFixture("golden/data-reader-escaped-chars");
  ASSERT_TRUE(t);
  EXPECT_EQ(LatestRows(t.get(), {"_1", "_2"}),
            Sorted({"foo1|bar+%21", "foo2|bar+%22", "foo3|bar+%23"}));
}

TEST_F(FixtureTest, TimestampInt96) {
  auto t = OpenFixture("golden/kernel-timestamp-INT96");
  ASSERT_TRUE(t);
  EXPECT_EQ(LatestRows(t.get(), {"id", "part", "time"}),
            Sorted({"0|2020-01-01 08:09:10.001+00|2020-02-01 08:09:10+00",
                    "1|2021-10-01 08:09:20+00|1999-01-01 09:00:00+00",
                    "2|2021-10-01 08:09:20+00|2000-01-01 09:00:00+00",
                    "3|1969-01-01 00:00:00+00|1969-01-01 00:00:00+00", "4|NULL|NULL"}));
}

TEST_F(FixtureTest, TimestampPartitionIso8601) {
  auto t = OpenFixture("golden/kernel-timestamp-partition-col-ISO8601");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
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

TEST_F(FixtureTest, TimeTravelByTimestamp) {
  TempDir tmp;
  std::string path = CopyFixture("golden/time-travel-start-start20-start40", tmp);
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

TEST_F(FixtureTest, TimeTravelSchemaChanges) {
  auto t = OpenFixture("golden/time-travel-schema-changes-b");
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
}

TEST_F(FixtureTest, TimeTravelPartitionChanges) {
  auto t = OpenFixture("golden/time-travel-partition-changes-b");
  ASSERT_TRUE(t);
  auto v0 = *t->SnapshotAt(Version(0));
  auto b0 = t->Scan(*v0);
  ASSERT_TRUE(b0.ok()) << b0.status().ToString();
  EXPECT_THAT(testing::ColumnNames(*b0), ElementsAre("id", "part5"));
  std::vector<std::string> e0, e1;
  for (int i = 0; i < 10; ++i) e0.push_back(std::to_string(i) + "|" + std::to_string(i % 5));
  for (int i = 10; i < 20; ++i) e1.push_back(std::to_string(i) + "|" + std::to_string(i % 2));
  EXPECT_EQ(Rows(*b0), Sorted(e0));
  auto latest = *t->Latest();
  auto b1 = t->Scan(*latest);
  ASSERT_TRUE(b1.ok()) << b1.status().ToString();
  EXPECT_THAT(testing::ColumnNames(*b1), ElementsAre("id", "part2"));
  EXPECT_EQ(Rows(*b1), Sorted(e1));
}

TEST_F(FixtureTest, DataSkippingBasicStatsAllTypes) {
  auto t = OpenFixture("golden/data-skipping-basic-stats-all-types");
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
  // The generator's JVM was at -08:00: the value is 2000-01-01T08:00:00Z.
  EXPECT_EQ(count({{"as_timestamp", CompareOp::kEq, "2000-01-01T08:00:00Z"}}),
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
                                    {"as_timestamp", CompareOp::kLt, "2000-01-01T07:00:00Z"},
                                    {"as_big_decimal", CompareOp::kEq, "1"},
                                    {"as_int", CompareOp::kIsNull, std::nullopt}}) {
    SCOPED_TRACE(p.column);
    EXPECT_EQ(count({p}), std::make_pair(size_t{0}, int64_t{0}));
  }
}

TEST_F(FixtureTest, DeltalogGetChanges) {
  auto t = OpenFixture("golden/deltalog-getChanges");
  ASSERT_TRUE(t);
  auto v = t->LatestTxnVersion("fakeAppId");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, std::optional<int64_t>(3));
  EXPECT_EQ(*t->LatestTxnVersion("nonExistentAppId"), std::nullopt);
  EXPECT_TRUE((*t->Latest())->files.empty());
}

TEST_F(FixtureTest, DeleteReAddSameFile) {
  auto t = OpenFixture("golden/delete-re-add-same-file-different-transactions");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_THAT(LivePaths(*snap), ElementsAre("bar", "foo"));
  EXPECT_EQ(snap->files[1].modification_time, 1700000000000);
}

TEST_F(FixtureTest, CommitInfoArbitraryOperationParams) {
  auto t = OpenFixture("golden/commit-info-containing-arbitrary-operationParams-types");
  ASSERT_TRUE(t);
  EXPECT_EQ(LatestRows(t.get(), {"id", "month"}), Sorted({"1|1", "2|2"}));
  auto history = t->History();
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  ASSERT_FALSE(history->empty());
  ASSERT_TRUE(history->front().commit_info);
  EXPECT_EQ(history->front().commit_info->operation, std::optional<std::string>("OPTIMIZE"));
  auto changes = t->Changes(Version(0), Version(2));
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  EXPECT_EQ(Rows(*changes, {"id", "_change_type", "_commit_version"}),
            Sorted({"1|insert|0", "2|insert|1"}));
}

TEST_F(FixtureTest, SparkDelta010) {
  auto t = OpenFixture("golden/spark-delta-0.1.0");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(3));
  EXPECT_EQ(snap->TxnVersion("txnId"), std::optional<int64_t>(0));
  auto b = t->Scan(*snap);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_THAT(testing::ColumnNames(*b), ElementsAre("id", "value"));
  EXPECT_EQ(b->schema()[0].type.id, engine::TypeId::kInteger);
  EXPECT_EQ(Rows(*b), Sorted({"4|d", "5|e", "6|f"}));
}

TEST_F(FixtureTest, SchemaEvolvability) {
  auto t = OpenFixture("golden/spark-transaction_log_schema_evolvability");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(5));
  EXPECT_EQ(snap->files.size(), 4u);
  std::vector<std::string> expected;
  for (int i = 1; i <= 9; ++i) {
    expected.push_back(std::to_string(i) + "|" + std::to_string(i));
    expected.push_back(std::to_string(i) + "|" + std::to_string(i));
  }
  EXPECT_EQ(LatestRows(t.get(), {"key", "value"}), Sorted(expected));
}

TEST_F(FixtureTest, KernelBasicWithCheckpoint) {
  auto t = OpenFixture("golden/kernel-basic-with-checkpoint");
  ASSERT_TRUE(t);
  EXPECT_EQ((*t->Latest())->version, Version(14));
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted(Range(0, 149)));
}

// ---------------- golden: errors and refusals ----------------

TEST_F(FixtureTest, VersionsNotContiguous) {
  Status st = OpenError("golden/versions-not-contiguous");
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("versions are not contiguous: [0, 2]"));
}

TEST_F(FixtureTest, InvalidProtocolVersion) {
  Status st = OpenError("golden/deltalog-invalid-protocol-version");
  EXPECT_TRUE(st.IsNotSupported()) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("Unsupported Delta protocol reader version 99"));
}

TEST_F(FixtureTest, RefusesDeletionVectors) {
  for (const char* name :
       {"golden/log-replay-dv-key-cases", "golden/dv-partitioned-with-checkpoint",
        "deltars/table-with-dv-small"}) {
    Status st = OpenError(name);
    EXPECT_TRUE(st.IsNotSupported()) << name << ": " << st.ToString();
    EXPECT_THAT(st.message(), HasSubstr("deletionVectors")) << name;
  }
}

TEST_F(FixtureTest, RefusesColumnMappingName) {
  Status st = OpenError("golden/table-with-columnmapping-mode-name");
  EXPECT_TRUE(st.IsNotSupported()) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("columnMapping"));
  EXPECT_THAT(st.message(), HasSubstr("name"));
}

TEST_F(FixtureTest, RefusesV2Checkpoint) {
  Status st = OpenError("golden/v2-checkpoint-json");
  EXPECT_TRUE(st.IsNotSupported()) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("v2Checkpoint"));
}

// ---------------- delta-rs fixtures ----------------

TEST_F(FixtureTest, RsSimpleTable) {
  auto t = OpenFixture("deltars/simple_table");
  ASSERT_TRUE(t);
  EXPECT_EQ((*t->Latest())->version, Version(4));  // .tmp/00000000000000000005.json is ignored
  EXPECT_EQ(LatestRows(t.get(), {"id"}), Sorted({"5", "7", "9"}));
  EXPECT_EQ(VersionRows(t.get(), 0, {"id"}), Sorted(Range(0, 4)));
  EXPECT_EQ(VersionRows(t.get(), 2, {"id"}), Sorted(Range(5, 9)));
  EXPECT_EQ(VersionRows(t.get(), 3, {"id"}), Sorted({"5", "7", "9", "106", "108"}));
  EXPECT_EQ(VersionRows(t.get(), 4, {"id"}), Sorted({"5", "7", "9"}));
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
  EXPECT_EQ(LatestRows(t.get(), {"version"}).size(), 11u);
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

TEST_F(FixtureTest, RsCheckpointsLogOnly) {
  auto t = OpenFixture("deltars/checkpoints");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(12));
  EXPECT_FALSE(snap->segment.checkpoint);
  EXPECT_EQ(snap->files.size(), 12u);
  EXPECT_EQ(snap->metadata.partition_columns, std::vector<std::string>{"date"});
  std::vector<std::string> names;
  for (const auto& f : snap->schema.fields) names.push_back(f.name);
  EXPECT_THAT(names, ElementsAre("some_struct", "value", "ts", "date"));
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

TEST_F(FixtureTest, RsFailedLastCheckpointUpdate) {
  auto t = OpenFixture("deltars/table_failed_last_checkpoint_update");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(3));
  ASSERT_TRUE(snap->segment.checkpoint);
  EXPECT_EQ(snap->segment.checkpoint->version, Version(3));  // not the stale hint (1)
  EXPECT_EQ(LatestRows(t.get()).size(), 20u);
}

TEST_F(FixtureTest, RsCdfTable) {
  TempDir tmp;
  std::string path = CopyFixture("deltars/cdf-table", tmp);
  // delta-rs uses commitInfo.timestamp; Sluice uses file times (Spark): set them equal.
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
  EXPECT_EQ(Rows(*only_v3, {"id", "name", "_change_type"}).size(), 1u);
}

TEST_F(FixtureTest, RsSimpleTableWithCdc) {
  auto t = OpenFixture("deltars/simple_table_with_cdc");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  ASSERT_EQ(snap->files.size(), 1u);
  EXPECT_THAT(snap->files[0].path, HasSubstr("part-00000-7444aec4"));
  EXPECT_EQ(LatestRows(t.get()), std::vector<std::string>{"0|Mino"});
  auto changes = t->Changes(Version(0));
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  auto rows = Rows(*changes, {"_change_type", "_commit_version"});
  EXPECT_THAT(rows, ::testing::Contains("update_postimage|2"));
  EXPECT_THAT(rows, ::testing::Contains("update_preimage|2"));
  EXPECT_THAT(rows, ::testing::Contains("insert|1"));
}

TEST_F(FixtureTest, RsDelta020) {
  auto t = OpenFixture("deltars/delta-0.2.0");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  EXPECT_EQ(snap->version, Version(3));
  std::vector<std::string> live;
  for (const auto& p : LivePaths(*snap)) live.push_back(p.substr(0, 19));
  EXPECT_EQ(live, Sorted({"part-00000-cb6b150b", "part-00000-7c2deba3", "part-00001-c373a5bd"}));
  EXPECT_EQ(snap->tombstones.size(), 4u);
  EXPECT_EQ(snap->TxnVersion("e4a20b59-dd0e-4c50-b074-e8ae4786df30"), std::optional<int64_t>(0));
  EXPECT_EQ(LatestRows(t.get(), {"value"}), Sorted({"1", "1", "2", "2", "3", "3"}));
  EXPECT_EQ(VersionRows(t.get(), 2, {"value"}), Sorted({"1", "2", "3"}));
  auto v0 = *t->SnapshotAt(Version(0));
  std::vector<std::string> v0_live;
  for (const auto& p : LivePaths(*v0)) v0_live.push_back(p.substr(0, 19));
  EXPECT_EQ(v0_live, Sorted({"part-00000-b44fcdb0", "part-00001-185eca06"}));
}

TEST_F(FixtureTest, RsDelta080Partitioned) {
  auto t = OpenFixture("deltars/delta-0.8.0-partitioned");
  ASSERT_TRUE(t);
  // FIXTURES.md lists the values 1..7 and the (year, month, day) tuples as two sorted lists;
  // the pairing below is the one in the files (value 4 is the only row of 2021/4/5, checked
  // against the parquet files and their partitionValues in the log).
  EXPECT_EQ(LatestRows(t.get(), {"value"}), Sorted(Range(1, 7)));
  EXPECT_EQ(LatestRows(t.get(), {"year", "month", "day"}),
            Sorted({"2020|1|1", "2020|2|3", "2020|2|5", "2021|12|20", "2021|12|20", "2021|12|4",
                    "2021|4|5"}));
  EXPECT_EQ(LatestRows(t.get(), {"value", "year", "month", "day"}),
            Sorted({"1|2020|1|1", "2|2020|2|3", "3|2020|2|5", "4|2021|4|5", "5|2021|12|4",
                    "6|2021|12|20", "7|2021|12|20"}));
  // Partition pruning: only the year=2021/month=12 files are read.
  auto snap = *t->Latest();
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

// ---------------- data skipping on real stats ----------------

TEST_F(FixtureTest, StatsPruneFilesFromJsonAndCheckpoint) {
  // 15 appends of 10 ids each; checkpoint at v10 carries stats as JSON strings.
  auto t = OpenFixture("golden/kernel-basic-with-checkpoint");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  ASSERT_GE(snap->files.size(), 15u);
  std::vector<AddFile> read;
  auto b = t->Scan(*snap, ScanFilter{{{"id", CompareOp::kGe, "140"}}}, &read);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(Rows(*b, {"id"}), Sorted(Range(140, 149)));
  // Each append wrote two files of 5 ids: only the two files of 140..149 are read.
  EXPECT_EQ(read.size(), 2u);
  for (const AddFile& f : read) EXPECT_THAT(*f.stats, HasSubstr("\"minValues\":{\"id\":14"));
  // A value between two files' ranges reads only the file that holds it.
  auto one = t->Scan(*snap, ScanFilter{{{"id", CompareOp::kEq, "25"}}}, &read);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(read.size(), 1u);
  EXPECT_EQ(Rows(*one, {"id"}), std::vector<std::string>{"25"});
}

TEST_F(FixtureTest, StatsParsedFromCheckpointPrune) {
  // Checkpoint v2 has only stats_parsed (writeStatsAsJson=false).
  auto t = OpenFixture("golden/spark-transaction_log_schema_evolvability");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  size_t with_stats = 0;
  for (const AddFile& f : snap->files) with_stats += f.stats.has_value();
  EXPECT_GT(with_stats, 0u);
  std::vector<AddFile> read;
  auto b = t->Scan(*snap, ScanFilter{{{"key", CompareOp::kEq, "1"}}}, &read);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(Rows(*b, {"key"}), Sorted({"1", "1"}));
  EXPECT_LT(read.size(), snap->files.size());
}

TEST_F(FixtureTest, EmptyTableScanHasSchemaColumns) {
  auto t = OpenFixture("golden/deltalog-getChanges");
  ASSERT_TRUE(t);
  auto snap = *t->Latest();
  auto b = t->Scan(*snap);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->num_rows(), 0);
  EXPECT_EQ(b->num_columns(), snap->schema.fields.size());
}

TEST_F(FixtureTest, CorruptCommitLineNamesFileAndLine) {
  TempDir tmp;
  std::string path = CopyFixture("golden/snapshot-data0", tmp);
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
  std::string path = Fixture("golden/kernel-basic-with-checkpoint");
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
  std::string path = CopyFixture("golden/snapshot-data0", tmp);
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
