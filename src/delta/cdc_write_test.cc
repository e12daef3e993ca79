// Change data feed written by DELETE/UPDATE/MERGE, read back through DeltaTable::Changes; and a
// concurrent UPDATE vs DELETE on the same file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delta/dml_delete.h"
#include "delta/dml_merge.h"
#include "delta/dml_test_util.h"
#include "delta/dml_update.h"

namespace sluice::delta {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Rows;

class CdcWriteTest : public testing::DmlTestBase {
 protected:
  void MakeCdfTable(std::vector<std::string> partition_by = {}) {
    WriteOptions o;
    o.configuration["delta.enableChangeDataFeed"] = "true";
    o.partition_by = std::move(partition_by);
    Append("SELECT range AS id, 'v' || range AS s, range % 2 AS p FROM range(10)", o);
  }
  const std::vector<std::string> kCols = {"id", "s", "p", "_change_type", "_commit_version"};
};

TEST_F(CdcWriteTest, UpdateDeleteMergeWriteChangeRows) {
  MakeCdfTable();
  ASSERT_TRUE(UpdateRows(Table(), {{"s", "'x'"}}, std::string("id < 2")).ok());
  EXPECT_THAT(ChangeRows(1, 1, kCols),
              ElementsAre("0|v0|0|update_preimage|1", "0|x|0|update_postimage|1",
                          "1|v1|1|update_preimage|1", "1|x|1|update_postimage|1"));
  EXPECT_EQ(CountActions(1, "cdc"), 1);
  EXPECT_EQ(Metric(1, "numAddedChangeFiles"), "1");
  for (const auto& line : CommitLines(1)) {
    if (line.contains("cdc")) {
      EXPECT_EQ(line["cdc"]["path"].get<std::string>().rfind("_change_data/", 0), 0u);
      EXPECT_EQ(line["cdc"]["dataChange"], false);
    }
  }

  ASSERT_TRUE(DeleteRows(Table(), std::string("id = 5")).ok());
  EXPECT_THAT(ChangeRows(2, 2, kCols), ElementsAre("5|v5|1|delete|2"));

  MergeSpec spec;
  spec.source_sql = "SELECT * FROM (VALUES (6, 'u'), (7, 'd'), (100, 'i')) AS x(id, op)";
  spec.on = "t.id = s.id";
  MergeClause del;
  del.kind = MergeClauseKind::kMatched;
  del.action = MergeActionKind::kDelete;
  del.condition = "s.op = 'd'";
  MergeClause upd;
  upd.kind = MergeClauseKind::kMatched;
  upd.action = MergeActionKind::kUpdate;
  upd.assignments = {{"s", "'merged'"}};
  MergeClause ins;
  ins.kind = MergeClauseKind::kNotMatched;
  ins.action = MergeActionKind::kInsert;
  ins.assignments = {{"id", "s.id"}, {"s", "s.op"}, {"p", "9"}};
  spec.clauses = {del, upd, ins};
  auto r = MergeInto(Table(), spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(ChangeRows(3, 3, kCols),
              ElementsAre("100|i|9|insert|3", "6|merged|0|update_postimage|3",
                          "6|v6|0|update_preimage|3", "7|v7|1|delete|3"));

  // An unconditional DELETE writes no cdc files: the reader derives deletes from removes.
  ASSERT_TRUE(DeleteRows(Table(), std::nullopt).ok());
  EXPECT_EQ(CountActions(4, "cdc"), 0);
  auto all = ChangeRows(4, 4, {"id", "_change_type"});
  EXPECT_EQ(all.size(), 9u);  // 10 - 1 (deleted) - 1 (deleted) + 1 (inserted)
  for (const auto& row : all) EXPECT_THAT(row, HasSubstr("|delete"));

  // The table content after each version equals the change log applied to the start.
  EXPECT_THAT(ReadRows(3, {"id", "s"}), ElementsAre("0|x", "100|i", "1|x", "2|v2", "3|v3", "4|v4",
                                                    "6|merged", "8|v8", "9|v9"));
}

// Spark's batch read of the feed has the latest schema's columns, whatever the range: rows of
// versions before ADD COLUMNS show the new column as NULL (found by test/interop/delta: Spark
// 4.2 with Delta 4.4). The streaming source asks for the end version's schema instead.
TEST_F(CdcWriteTest, ChangesHaveTheLatestSchemaUnlessAskedForTheEndVersions) {
  MakeCdfTable();
  auto added = writer_->AddColumns({{"extra", *engine::DataType::FromSql("VARCHAR"), true}});
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  Append("SELECT 10 AS id, 'v10' AS s, 0 AS p, 'late' AS extra");
  auto t = Reader();
  ASSERT_TRUE(t);
  auto latest = t->Changes(Version(0), Version(0));
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  std::vector<std::string> names;
  for (const auto& f : latest->schema()) names.push_back(f.name);
  EXPECT_THAT(names, ElementsAre("id", "s", "p", "extra", "_change_type", "_commit_version",
                                 "_commit_timestamp"));
  auto rows = Rows(*latest, {"id", "extra", "_change_type"});
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_EQ(rows[0], "0|NULL|insert");
  EXPECT_THAT(ChangeRows(2, 2, {"id", "extra", "_change_type"}), ElementsAre("10|late|insert"));

  auto at_end = t->Changes(Version(0), Version(0), ChangesSchema::kEndVersion);
  ASSERT_TRUE(at_end.ok()) << at_end.status().ToString();
  names.clear();
  for (const auto& f : at_end->schema()) names.push_back(f.name);
  EXPECT_THAT(names,
              ElementsAre("id", "s", "p", "_change_type", "_commit_version", "_commit_timestamp"));
}

TEST_F(CdcWriteTest, PartitionedTableCdcFilesArePartitioned) {
  MakeCdfTable({"p"});
  ASSERT_TRUE(UpdateRows(Table(), {{"s", "s || '!'"}}, std::string("id IN (1, 2)")).ok());
  EXPECT_THAT(ChangeRows(1, 1, kCols),
              ElementsAre("1|v1!|1|update_postimage|1", "1|v1|1|update_preimage|1",
                          "2|v2!|0|update_postimage|1", "2|v2|0|update_preimage|1"));
  int cdc = 0;
  for (const auto& line : CommitLines(1)) {
    if (!line.contains("cdc")) continue;
    ++cdc;
    const std::string path = line["cdc"]["path"].get<std::string>();
    const std::string p = line["cdc"]["partitionValues"]["p"].get<std::string>();
    EXPECT_EQ(path.rfind("_change_data/p=" + p + "/", 0), 0u) << path;
  }
  EXPECT_EQ(cdc, 2);
  // A partition-only DELETE removes whole files without cdc files.
  ASSERT_TRUE(DeleteRows(Table(), std::string("p = 0")).ok());
  EXPECT_EQ(CountActions(2, "cdc"), 0);
  EXPECT_EQ(ChangeRows(2, 2, {"id", "_change_type"}).size(), 5u);
}

TEST_F(CdcWriteTest, NoCdcFilesWithoutChangeDataFeed) {
  Append("SELECT range AS id FROM range(5)");
  ASSERT_TRUE(UpdateRows(Table(), {{"id", "id + 100"}}, std::string("id = 1")).ok());
  EXPECT_EQ(CountActions(1, "cdc"), 0);
  EXPECT_FALSE(std::filesystem::exists(table_ + "/_change_data"));
}

TEST_F(CdcWriteTest, ConcurrentUpdateAndDeleteOnSameFileConflict) {
  Append("SELECT range AS id, 0 AS n FROM range(10)");
  auto other = Writer();
  ASSERT_TRUE(other);
  DmlTable second{other.get(), fs::LocalFileSystem(), engine_, conn_.get()};
  Status delete_status = Status::Internal("not run");
  DmlOptions o;
  o.before_commit = [&]() {
    auto d = DeleteRows(second, std::string("id = 3"));
    delete_status = d.ok() ? Status::OK() : d.status();
    return Status::OK();
  };
  auto u = UpdateRows(Table(), {{"n", "1"}}, std::string("id = 7"), o);
  EXPECT_TRUE(delete_status.ok()) << delete_status.ToString();
  ASSERT_FALSE(u.ok());
  EXPECT_TRUE(u.status().IsConflict()) << u.status().ToString();
  EXPECT_THAT(u.status().ToString(), HasSubstr("ConcurrentDelete"));
  EXPECT_EQ(ValidateLog(), 1);
  EXPECT_EQ(ReadRows(), Expected("SELECT range, 0 FROM range(10) WHERE range <> 3"));
  EXPECT_EQ(DataFiles().size(),
            2u);  // the original and the delete's rewrite; the update's file is gone
}

}  // namespace
}  // namespace sluice::delta
