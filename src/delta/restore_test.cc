// RESTORE round trips and DESCRIBE HISTORY / DETAIL / DESCRIBE.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delta/describe.h"
#include "delta/dml_delete.h"
#include "delta/dml_test_util.h"
#include "delta/dml_update.h"
#include "delta/restore.h"

namespace sluice::delta {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Rows;

class RestoreTest : public testing::DmlTestBase {};

TEST_F(RestoreTest, RoundTripToVersionAndTimestamp) {
  Append("SELECT range AS id, 'a' AS s FROM range(5)");                          // v0
  Append("SELECT range AS id, 'b' AS s FROM range(5, 8)");                       // v1
  ASSERT_TRUE(UpdateRows(Table(), {{"s", "'c'"}}, std::string("id = 1")).ok());  // v2
  ASSERT_TRUE(DeleteRows(Table(), std::string("id >= 6")).ok());                 // v3
  auto v1_rows = ReadRows(1);
  auto r = RestoreTable(Table(), RestoreTarget{Version(1), std::nullopt});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->version, Version(4));
  EXPECT_EQ(ReadRows(), v1_rows);
  EXPECT_EQ(CommitInfo(4)["operation"], "RESTORE");
  EXPECT_EQ(CommitInfo(4)["operationParameters"]["version"], "1");
  // v1 had files A (v0) and B (v1); v3 had A' (update rewrite of A) and B' (delete rewrite of B).
  EXPECT_EQ(Metric(4, "numRestoredFiles"), "2");
  EXPECT_EQ(Metric(4, "numRemovedFiles"), "2");
  EXPECT_EQ(Metric(4, "numOfFilesAfterRestore"), "2");
  for (const auto& line : CommitLines(4)) {
    if (line.contains("add")) {
      EXPECT_EQ(line["add"]["dataChange"], true);
    }
    if (line.contains("remove")) {
      EXPECT_EQ(line["remove"]["dataChange"], true);
    }
  }
  ValidateLog();

  // Back to version 3 by its commit timestamp.
  auto t = Reader();
  auto ts = t->CommitTimestamps();
  ASSERT_TRUE(ts.ok());
  int64_t ts3 = -1;
  for (const auto& c : *ts) {
    if (c.version == Version(3)) ts3 = c.timestamp_ms;
  }
  auto r2 = RestoreTable(Table(), RestoreTarget{std::nullopt, ts3});
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(ReadRows(), ReadRows(3));
  EXPECT_THAT(ReadRows(), ElementsAre("0|a", "1|c", "2|a", "3|a", "4|a", "5|b"));
}

TEST_F(RestoreTest, ErrorsCommitNothing) {
  Append("SELECT range AS id FROM range(3)");
  ASSERT_TRUE(DeleteRows(Table(), std::string("id = 0")).ok());
  auto r = RestoreTable(Table(), RestoreTarget{Version(7), std::nullopt});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().ToString(),
              HasSubstr("Cannot restore table to version 7. Available versions: [0, 1]"));
  // The file of version 0 is gone (as if vacuumed): RESTORE refuses.
  for (const auto& f : DataFiles()) std::filesystem::remove(table_ + "/" + f);
  auto r2 = RestoreTable(Table(), RestoreTarget{Version(0), std::nullopt});
  ASSERT_FALSE(r2.ok());
  EXPECT_TRUE(r2.status().IsNotFound()) << r2.status().ToString();
  EXPECT_THAT(r2.status().ToString(), HasSubstr("data files it references are missing"));
  EXPECT_TRUE(std::filesystem::exists(table_ + "/_delta_log/00000000000000000001.json"));
  EXPECT_FALSE(std::filesystem::exists(table_ + "/_delta_log/00000000000000000002.json"));
}

// A RESTORE that loses to a concurrent DELETE fails with Conflict and deletes nothing: the files
// it re-adds belong to older versions of the table.
TEST_F(RestoreTest, ConflictKeepsTheFilesItReAdds) {
  Append("SELECT range AS id FROM range(5)");                     // v0: file A
  ASSERT_TRUE(DeleteRows(Table(), std::string("id >= 0")).ok());  // v1: removes A
  Append("SELECT 10 AS id");                                      // v2: file B
  DmlOptions options;
  options.before_commit = [&] {  // v3, committed while the RESTORE is in flight
    return DeleteRows(Table(), std::string("id = 10")).status();
  };
  auto r = RestoreTable(Table(), RestoreTarget{Version(0), std::nullopt}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsConflict()) << r.status().ToString();
  EXPECT_EQ(ReadRows(0).size(), 5u);  // A is still on storage
  auto again = RestoreTable(Table(), RestoreTarget{Version(0), std::nullopt});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_THAT(ReadRows(), ElementsAre("0", "1", "2", "3", "4"));
  ValidateLog();
}

TEST_F(RestoreTest, DescribeHistoryDetailColumns) {
  WriteOptions o;
  o.partition_by = {"p"};
  o.configuration["delta.enableChangeDataFeed"] = "true";
  Append("SELECT range AS id, range % 2 AS p, 1.5::DECIMAL(10,2) AS d FROM range(4)", o);
  ASSERT_TRUE(DeleteRows(Table(), std::string("id = 1")).ok());
  auto t = Reader();
  auto h = DescribeHistory(t.get(), conn_.get());
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_THAT(Rows(*h, {"version", "operation", "readVersion", "isBlindAppend"}),
              ElementsAre("0|WRITE|NULL|false", "1|DELETE|0|false"));
  EXPECT_EQ(h->GetString(0, 0), "1");  // newest first
  ASSERT_TRUE(conn_->RegisterBatch("hist", *h).ok());
  EXPECT_THAT(
      Rows(Sql(
          "SELECT operationMetrics['numDeletedRows'], operationParameters['predicate'] FROM hist "
          "WHERE version = 1")),
      ElementsAre("1|[\"id = 1\"]"));
  EXPECT_THAT(Rows(Sql("SELECT typeof(timestamp), typeof(operationParameters) FROM hist LIMIT 1")),
              ElementsAre("TIMESTAMP WITH TIME ZONE|MAP(VARCHAR, VARCHAR)"));
  auto limited = DescribeHistory(t.get(), conn_.get(), 1);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->num_rows(), 1);

  auto d = DescribeDetail(t.get(), conn_.get());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_THAT(Rows(*d, {"format", "location", "partitionColumns", "numFiles", "minReaderVersion",
                        "minWriterVersion"}),
              ElementsAre("delta|" + table_ + "|[p]|2|1|4"));
  ASSERT_TRUE(conn_->RegisterBatch("detail", *d).ok());
  EXPECT_THAT(
      Rows(Sql("SELECT properties['delta.enableChangeDataFeed'], sizeInBytes > 0 FROM detail")),
      ElementsAre("true|true"));

  auto c = DescribeColumns(t.get(), conn_.get());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::vector<std::string> got;
  for (int64_t r = 0; r < c->num_rows(); ++r) {
    got.push_back(c->GetString(r, 0).value_or("NULL") + "|" + c->GetString(r, 1).value_or("NULL") +
                  "|" + c->GetString(r, 2).value_or("NULL"));
  }
  EXPECT_THAT(got, ElementsAre("id|bigint|NULL", "p|bigint|NULL", "d|decimal(10,2)|NULL", "||NULL",
                               "# Partition Information||NULL", "# col_name|data_type|comment",
                               "p|bigint|NULL"));
  EXPECT_EQ(
      SparkTypeName(
          R"({"type":"map","keyType":"string","valueType":{"type":"array","elementType":"integer"}})"),
      "map<string,array<int>>");
}

}  // namespace
}  // namespace sluice::delta
