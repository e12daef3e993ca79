// MERGE: every clause kind against an equivalent DuckDB query, touched files only, the
// multiple-match error, NOT MATCHED BY SOURCE, pruning by source key range.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delta/dml_merge.h"
#include "delta/dml_test_util.h"

namespace sluice::delta {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Rows;

class MergeTest : public testing::DmlTestBase {
 protected:
  // Target: ids 0..99 in four files of 25 ids each, v = id * 10.
  void MakeTarget() {
    for (int k = 0; k < 4; ++k) {
      Append("SELECT range AS id, range * 10 AS v, 'old' AS tag FROM range(" +
             std::to_string(25 * k) + ", " + std::to_string(25 * k + 25) + ")");
    }
  }
  static std::string Target() {
    return "SELECT range AS id, range * 10 AS v, 'old' AS tag FROM range(100)";
  }

  static MergeClause Clause(MergeClauseKind kind, MergeActionKind action,
                            std::optional<std::string> cond = {},
                            std::vector<std::pair<std::string, std::string>> assignments = {}) {
    MergeClause c;
    c.kind = kind;
    c.action = action;
    c.condition = std::move(cond);
    c.assignments = std::move(assignments);
    return c;
  }
};

TEST_F(MergeTest, UpsertRewritesOnlyFilesWithMatchedKeys) {
  MakeTarget();
  MergeSpec spec;
  // Keys 30..34 (file 2 only) plus new keys 200..202.
  spec.source_sql =
      "SELECT * FROM (VALUES (30, 1), (31, 2), (32, 3), (33, 4), (34, 5), (200, 6), (201, 7), "
      "(202, 8)) AS x(id, v)";
  spec.on = "t.id = s.id";
  spec.clauses = {Clause(MergeClauseKind::kMatched, MergeActionKind::kUpdate, {},
                         {{"v", "s.v"}, {"tag", "'upd'"}}),
                  Clause(MergeClauseKind::kNotMatched, MergeActionKind::kInsert, {},
                         {{"id", "s.id"}, {"v", "s.v"}, {"tag", "'new'"}})};
  auto r = MergeInto(Table(), spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->version);
  EXPECT_EQ(r->removed_files.size(), 1u);
  EXPECT_EQ(Metric(4, "numTargetRowsUpdated"), "5");
  EXPECT_EQ(Metric(4, "numTargetRowsInserted"), "3");
  EXPECT_EQ(Metric(4, "numTargetRowsCopied"), "20");
  EXPECT_EQ(Metric(4, "numTargetFilesRemoved"), "1");
  EXPECT_EQ(Metric(4, "numSourceRows"), "8");
  EXPECT_EQ(CommitInfo(4)["operation"], "MERGE");
  Sql("CREATE OR REPLACE TEMP TABLE src AS " + spec.source_sql);
  EXPECT_EQ(
      ReadRows(),
      Expected("SELECT t.id, COALESCE(s.v, t.v), CASE WHEN s.id IS NULL THEN 'old' ELSE 'upd' END "
               "FROM (" +
               Target() +
               ") t LEFT JOIN src s ON t.id = s.id UNION ALL "
               "SELECT id, v, 'new' FROM src WHERE id >= 200"));
  ValidateLog();
}

TEST_F(MergeTest, ClausesInOrderFirstMatchWins) {
  MakeTarget();
  MergeSpec spec;
  spec.source_batch = Sql("SELECT range AS id, range % 4 AS op FROM range(0, 120, 3)");
  spec.on = "t.id = s.id";
  spec.clauses = {
      Clause(MergeClauseKind::kMatched, MergeActionKind::kDelete, std::string("s.op = 0")),
      Clause(MergeClauseKind::kMatched, MergeActionKind::kUpdate, std::string("s.op = 1"),
             {{"tag", "'one'"}}),
      Clause(MergeClauseKind::kMatched, MergeActionKind::kUpdate, std::string("s.op <= 2"),
             {{"tag", "'le2'"}}),
      Clause(MergeClauseKind::kNotMatched, MergeActionKind::kInsert, std::string("s.op = 1"),
             {{"id", "s.id"}, {"tag", "'ins'"}}),
      Clause(MergeClauseKind::kNotMatched, MergeActionKind::kInsertAll, {})};
  // INSERT * needs every target column in the source: the source lacks v and tag.
  auto bad = MergeInto(Table(), spec);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().ToString(), HasSubstr("cannot resolve t.v in INSERT *"));
  spec.clauses.pop_back();
  auto r = MergeInto(Table(), spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Sql("CREATE OR REPLACE TEMP TABLE src AS SELECT range AS id, range % 4 AS op FROM range(0, 120, "
      "3)");
  EXPECT_EQ(
      ReadRows(),
      Expected(
          "SELECT t.id, t.v, CASE WHEN s.op = 1 THEN 'one' WHEN s.op = 2 THEN 'le2' ELSE t.tag END "
          "FROM (" +
          Target() +
          ") t LEFT JOIN src s ON t.id = s.id WHERE s.op IS DISTINCT FROM 0 "
          "UNION ALL SELECT id, NULL, 'ins' FROM src WHERE id >= 100 AND op = 1"));
}

TEST_F(MergeTest, UpdateAllAndInsertAll) {
  MakeTarget();
  MergeSpec spec;
  spec.source_batch = Sql("SELECT range AS ID, -range AS v, 'src' AS tag FROM range(95, 105)");
  spec.target_alias = "tgt";
  spec.source_alias = "src";
  spec.on = "tgt.id = src.id";
  spec.clauses = {Clause(MergeClauseKind::kMatched, MergeActionKind::kUpdateAll),
                  Clause(MergeClauseKind::kNotMatched, MergeActionKind::kInsertAll)};
  auto r = MergeInto(Table(), spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->removed_files.size(), 1u);
  EXPECT_EQ(ReadRows(), Expected("SELECT id, v, tag FROM (" + Target() +
                                 ") WHERE id < 95 UNION ALL "
                                 "SELECT range, -range, 'src' FROM range(95, 105)"));
}

TEST_F(MergeTest, MultipleMatchesFail) {
  MakeTarget();
  MergeSpec spec;
  spec.source_sql = "SELECT * FROM (VALUES (10, 1), (10, 2), (70, 3)) AS x(id, v)";
  spec.on = "t.id = s.id";
  spec.clauses = {Clause(MergeClauseKind::kMatched, MergeActionKind::kUpdate, {}, {{"v", "s.v"}})};
  auto r = MergeInto(Table(), spec);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().ToString(), HasSubstr(kMergeMultipleMatchMessage));
  EXPECT_EQ(ValidateLog(), 3);        // nothing committed
  EXPECT_EQ(DataFiles().size(), 4u);  // and no file left behind

  // A condition under which only one of the duplicates modifies the row: allowed.
  spec.clauses[0].condition = "s.v <> 2";
  auto ok = MergeInto(Table(), spec);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(Metric(4, "numTargetRowsUpdated"), "2");

  // The only MATCHED clause an unconditional DELETE: duplicates are allowed, as in Spark.
  spec.clauses = {Clause(MergeClauseKind::kMatched, MergeActionKind::kDelete)};
  auto del = MergeInto(Table(), spec);
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  EXPECT_EQ(Metric(5, "numTargetRowsDeleted"), "2");
  EXPECT_EQ(ReadRows(0).size(), 25u);
  EXPECT_EQ(ReadRows().size(), 98u);
}

TEST_F(MergeTest, NotMatchedBySource) {
  MakeTarget();
  MergeSpec spec;
  spec.source_batch = Sql("SELECT range AS id FROM range(0, 50)");
  spec.on = "t.id = s.id";
  spec.clauses = {Clause(MergeClauseKind::kNotMatchedBySource, MergeActionKind::kDelete,
                         std::string("t.id >= 90")),
                  Clause(MergeClauseKind::kNotMatchedBySource, MergeActionKind::kUpdate, {},
                         {{"tag", "'orphan'"}})};
  auto r = MergeInto(Table(), spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->removed_files.size(), 2u);  // the files of ids 50..99
  EXPECT_EQ(Metric(4, "numTargetRowsNotMatchedBySourceDeleted"), "10");
  EXPECT_EQ(Metric(4, "numTargetRowsNotMatchedBySourceUpdated"), "40");
  EXPECT_EQ(ReadRows(),
            Expected("SELECT id, v, CASE WHEN id >= 50 THEN 'orphan' ELSE tag END FROM (" +
                     Target() + ") WHERE id < 90"));
}

TEST_F(MergeTest, NoChangeCommitsNothingAndClauseErrors) {
  MakeTarget();
  MergeSpec spec;
  spec.source_sql = "SELECT 500 AS id";
  spec.on = "t.id = s.id";
  spec.clauses = {Clause(MergeClauseKind::kMatched, MergeActionKind::kDelete)};
  auto r = MergeInto(Table(), spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->version);
  spec.clauses = {Clause(MergeClauseKind::kMatched, MergeActionKind::kDelete),
                  Clause(MergeClauseKind::kMatched, MergeActionKind::kUpdate,
                         std::string("s.id > 0"), {{"v", "1"}})};
  auto bad = MergeInto(Table(), spec);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().ToString(),
              HasSubstr("only the last WHEN MATCHED clause can omit the condition"));
  spec.clauses = {Clause(MergeClauseKind::kNotMatched, MergeActionKind::kDelete)};
  EXPECT_FALSE(MergeInto(Table(), spec).ok());
  EXPECT_EQ(ValidateLog(), 3);
}

TEST_F(MergeTest, PartitionedTargetWithLiteralConjunct) {
  WriteOptions o;
  o.partition_by = {"p"};
  Append("SELECT range AS id, range % 4 AS p, 0 AS n FROM range(40)", o);
  ASSERT_EQ(LiveFiles().size(), 4u);
  MergeSpec spec;
  spec.source_batch = Sql("SELECT range AS id FROM range(40)");
  spec.on = "t.id = s.id AND t.p = 2";
  spec.clauses = {
      Clause(MergeClauseKind::kMatched, MergeActionKind::kUpdate, {}, {{"n", "t.n + 1"}})};
  auto r = MergeInto(Table(), spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->removed_files.size(), 1u);
  EXPECT_EQ(
      ReadRows(),
      Expected(
          "SELECT range, range % 4, CASE WHEN range % 4 = 2 THEN 1 ELSE 0 END FROM range(40)"));
}

}  // namespace
}  // namespace sluice::delta
