// OPTIMIZE: bin-packing per partition, dataChange=false, rows unchanged, no-op cases.
#include <algorithm>
#include <cstdint>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delta/dml_test_util.h"
#include "delta/optimize.h"

namespace sluice::delta {
namespace {

using ::testing::HasSubstr;
using testing::Rows;

class OptimizeTest : public testing::DmlTestBase {};

TEST_F(OptimizeTest, CompactsSmallFilesPerPartition) {
  WriteOptions o;
  o.partition_by = {"p"};
  o.configuration["delta.enableChangeDataFeed"] = "true";
  for (int k = 0; k < 5; ++k) {
    Append("SELECT range AS id, range % 2 AS p, 'x' || range AS s FROM range(" +
               std::to_string(k * 100) + ", " + std::to_string(k * 100 + 100) + ")",
           o);
  }
  ASSERT_EQ(LiveFiles().size(), 10u);
  auto before = ReadRows();
  auto r = Optimize(Table());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->version, Version(5));
  EXPECT_EQ(r->removed_files.size(), 10u);
  EXPECT_EQ(r->added_files.size(), 2u);  // one per partition
  EXPECT_EQ(LiveFiles().size(), 2u);
  EXPECT_EQ(ReadRows(), before);
  EXPECT_EQ(CommitInfo(5)["operation"], "OPTIMIZE");
  EXPECT_EQ(Metric(5, "numRemovedFiles"), "10");
  EXPECT_EQ(Metric(5, "numAddedFiles"), "2");
  for (const auto& line : CommitLines(5)) {
    if (line.contains("add")) {
      EXPECT_EQ(line["add"]["dataChange"], false);
    }
    if (line.contains("remove")) {
      EXPECT_EQ(line["remove"]["dataChange"], false);
    }
  }
  // The change data feed sees no change in an OPTIMIZE commit.
  EXPECT_TRUE(ChangeRows(5, 5, {"id"}).empty());
  ValidateLog();
  // Nothing left to compact: no commit.
  auto again = Optimize(Table());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->version);
}

TEST_F(OptimizeTest, PartitionPredicateAndTargetSize) {
  WriteOptions o;
  o.partition_by = {"p"};
  for (int k = 0; k < 4; ++k) {
    Append("SELECT range AS id, range % 2 AS p FROM range(" + std::to_string(k * 10) + ", " +
               std::to_string(k * 10 + 10) + ")",
           o);
  }
  OptimizeOptions opt;
  opt.partition_predicate = "id > 3";
  auto bad = Optimize(Table(), opt);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().ToString(), HasSubstr("Predicate references non-partition column"));

  opt.partition_predicate = "p = 1";
  auto r = Optimize(Table(), opt);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->removed_files.size(), 4u);
  EXPECT_EQ(r->added_files.size(), 1u);
  EXPECT_EQ(LiveFiles().size(), 5u);
  EXPECT_EQ(ReadRows(), Expected("SELECT range, range % 2 FROM range(40)"));

  // A target smaller than two files together: bins of one file are skipped -> no-op.
  auto t = Reader();
  auto snap = t->Latest();
  ASSERT_TRUE(snap.ok());
  int64_t smallest = INT64_MAX;
  for (const auto& f : (*snap)->files) smallest = std::min(smallest, f.size);
  OptimizeOptions tiny;
  tiny.target_file_size = smallest + 1;
  auto none = Optimize(Table(), tiny);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->version);
}

}  // namespace
}  // namespace sluice::delta
