// DELETE and UPDATE: results against DuckDB, touched files only, metrics, CDF, conflicts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "delta/dml_delete.h"
#include "delta/dml_test_util.h"
#include "delta/dml_update.h"

namespace sluice::delta {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Rows;

class DmlTest : public testing::DmlTestBase {
 protected:
  // Four files of 25 rows each: ids 0..99, file k holds ids 25k..25k+24.
  void MakeFourFiles() {
    for (int k = 0; k < 4; ++k) {
      Append("SELECT range AS id, 'v' || range AS s, range % 3 AS g FROM range(" +
             std::to_string(25 * k) + ", " + std::to_string(25 * k + 25) + ")");
    }
  }
  std::string Base() {
    return "SELECT range AS id, 'v' || range AS s, range % 3 AS g FROM range(100)";
  }
};

TEST_F(DmlTest, DeleteRewritesOnlyTouchedFiles) {
  MakeFourFiles();
  auto before = LiveFiles();
  ASSERT_EQ(before.size(), 4u);
  auto r = DeleteRows(Table(), std::string("id >= 30 AND id < 40 AND g = 1"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->version.has_value());
  EXPECT_EQ(*r->version, Version(4));
  EXPECT_EQ(r->removed_files.size(), 1u);  // only the file with ids 25..49
  EXPECT_EQ(r->added_files.size(), 1u);
  EXPECT_EQ(ReadRows(),
            Expected("SELECT * FROM (" + Base() + ") WHERE NOT (id >= 30 AND id < 40 AND g = 1)"));
  EXPECT_EQ(Metric(4, "numDeletedRows"), "3");  // 31, 34, 37
  EXPECT_EQ(Metric(4, "numCopiedRows"), "22");
  EXPECT_EQ(Metric(4, "numRemovedFiles"), "1");
  EXPECT_EQ(CommitInfo(4)["operation"], "DELETE");
  EXPECT_EQ(CommitInfo(4)["operationParameters"]["predicate"],
            "[\"id >= 30 AND id < 40 AND g = 1\"]");
  EXPECT_EQ(CountActions(4, "remove"), 1);
  ValidateLog();
}

TEST_F(DmlTest, DeleteNullConditionKeepsRows) {
  Append("SELECT * FROM (VALUES (1, NULL), (2, 5), (3, 7)) AS v(id, x)");
  auto r = DeleteRows(Table(), std::string("x > 5"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(ReadRows(), ElementsAre("1|NULL", "2|5"));
}

TEST_F(DmlTest, DeleteNothingCommitsNothing) {
  MakeFourFiles();
  auto r = DeleteRows(Table(), std::string("id > 1000"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->version.has_value());
  auto r2 = DeleteRows(Table(), std::string("s = 'nope'"));
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_FALSE(r2->version.has_value());
  EXPECT_EQ(ValidateLog(), 3);
}

TEST_F(DmlTest, UnconditionalDeleteRemovesAllFiles) {
  MakeFourFiles();
  auto r = DeleteRows(Table(), std::nullopt);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->removed_files.size(), 4u);
  EXPECT_TRUE(r->added_files.empty());
  EXPECT_TRUE(ReadRows().empty());
  EXPECT_EQ(Metric(4, "numDeletedRows"), "100");
  EXPECT_EQ(CountActions(4, "add"), 0);
}

TEST_F(DmlTest, PartitionDeleteDropsWholeFiles) {
  WriteOptions o;
  o.partition_by = {"g"};
  Append(Base(), o);
  ASSERT_EQ(LiveFiles().size(), 3u);
  auto r = DeleteRows(Table(), std::string("g = 1 OR g = 2"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->removed_files.size(), 2u);
  EXPECT_TRUE(r->added_files.empty());
  EXPECT_EQ(ReadRows(), Expected("SELECT * FROM (" + Base() + ") WHERE g = 0"));
  EXPECT_EQ(Metric(1, "numDeletedRows"), "66");
  // Data condition on a partitioned table: only the files of the matching partition rewritten.
  auto r2 = DeleteRows(Table(), std::string("g = 0 AND id < 10"));
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r2->removed_files.size(), 1u);
  EXPECT_EQ(ReadRows(), Expected("SELECT * FROM (" + Base() + ") WHERE g = 0 AND id >= 10"));
}

TEST_F(DmlTest, UpdateRewritesOnlyTouchedFiles) {
  MakeFourFiles();
  auto r = UpdateRows(Table(), {{"s", "upper(s) || '!'"}, {"g", "g + 10"}},
                      std::string("id BETWEEN 60 AND 64"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->removed_files.size(), 1u);
  EXPECT_EQ(ReadRows(),
            Expected("SELECT id, CASE WHEN id BETWEEN 60 AND 64 THEN upper(s) || '!' ELSE s END, "
                     "CASE WHEN id BETWEEN 60 AND 64 THEN g + 10 ELSE g END FROM (" +
                     Base() + ")"));
  EXPECT_EQ(Metric(4, "numUpdatedRows"), "5");
  EXPECT_EQ(Metric(4, "numCopiedRows"), "20");
  EXPECT_EQ(CommitInfo(4)["operation"], "UPDATE");
  ValidateLog();
}

TEST_F(DmlTest, UpdateWithoutConditionAndQualifiedColumns) {
  MakeFourFiles();
  DmlOptions o;
  o.target_alias = "t";
  auto r = UpdateRows(Table(), {{"t.g", "t.id * 2"}}, std::nullopt, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->removed_files.size(), 4u);
  EXPECT_EQ(r->added_files.size(), 4u);  // rewritten files keep the size of the ones they replace
  EXPECT_EQ(ReadRows(), Expected("SELECT id, s, id * 2 FROM (" + Base() + ")"));
  EXPECT_EQ(Metric(4, "numUpdatedRows"), "100");
}

TEST_F(DmlTest, UpdateErrors) {
  MakeFourFiles();
  auto r = UpdateRows(Table(), {{"nope", "1"}}, std::nullopt);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().ToString(), HasSubstr("cannot resolve column 'nope'"));
  auto r2 = UpdateRows(Table(), {{"g", "1"}, {"G", "2"}}, std::nullopt);
  ASSERT_FALSE(r2.ok());
  EXPECT_THAT(r2.status().ToString(), HasSubstr("assigned more than once"));
  auto r3 = UpdateRows(Table(), {{"g", "no_such_fn(id)"}}, std::string("id = 1"));
  ASSERT_FALSE(r3.ok());
  EXPECT_EQ(ValidateLog(), 3);
}

TEST_F(DmlTest, UpdatePartitionColumnMovesRows) {
  WriteOptions o;
  o.partition_by = {"g"};
  Append(Base(), o);
  auto r = UpdateRows(Table(), {{"g", "5"}}, std::string("id < 3"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ReadRows(),
            Expected("SELECT id, s, CASE WHEN id < 3 THEN 5 ELSE g END FROM (" + Base() + ")"));
  auto t = Reader();
  auto s = t->Latest();
  ASSERT_TRUE(s.ok());
  std::set<std::string> parts;
  for (const auto& f : (*s)->files) parts.insert(f.partition_values.at("g").value_or("null"));
  EXPECT_EQ(parts, (std::set<std::string>{"0", "1", "2", "5"}));
}

}  // namespace
}  // namespace sluice::delta
