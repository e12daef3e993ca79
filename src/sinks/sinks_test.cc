// Tests of MemorySink, ForeachBatchSink and ConsoleSink.
#include <algorithm>
#include <sstream>
#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/test_util.h"
#include "sinks/blackhole_sink.h"
#include "sinks/console_sink.h"
#include "sinks/foreach_batch_sink.h"
#include "sinks/memory_sink.h"

namespace sluice::sinks {
namespace {

using engine::testing::EngineTest;
using ::testing::ElementsAre;

class SinksTest : public EngineTest {};

TEST_F(SinksTest, OutputModeNames) {
  EXPECT_STREQ(OutputModeName(OutputMode::kAppend), "Append");
  EXPECT_STREQ(OutputModeName(OutputMode::kUpdate), "Update");
  EXPECT_STREQ(OutputModeName(OutputMode::kComplete), "Complete");
}

TEST_F(SinksTest, BlackholeSinkCountsAndDiscards) {
  BlackholeSink sink;
  EXPECT_EQ(sink.Description(), "BlackholeSink");
  EXPECT_EQ(sink.LastNumOutputRows(), std::nullopt);
  ASSERT_TRUE(sink.AddBatch(BatchId(0), Q("SELECT * FROM range(5)"), OutputMode::kAppend).ok());
  ASSERT_TRUE(sink.AddBatch(BatchId(1), Q("SELECT 1 AS a"), OutputMode::kUpdate).ok());
  EXPECT_EQ(sink.LastNumOutputRows(), 1);
  EXPECT_EQ(sink.total_rows(), 6);
  EXPECT_EQ(sink.total_batches(), 2);
  EXPECT_EQ(sink.Metrics().at("totalRows"), "6");
}

TEST_F(SinksTest, MemorySinkAppendsAndSkipsRerunBatches) {
  MemorySink sink("out");
  EXPECT_EQ(sink.Description(), "MemorySink[out]");
  ASSERT_TRUE(
      sink.AddBatch(BatchId(0), Q("SELECT 1 AS a UNION ALL SELECT 2"), OutputMode::kAppend).ok());
  ASSERT_TRUE(sink.AddBatch(BatchId(1), Q("SELECT 3 AS a"), OutputMode::kAppend).ok());
  EXPECT_EQ(sink.LastNumOutputRows(), 1);
  // A re-run of batch 1 (crash before commits/1) adds nothing.
  ASSERT_TRUE(sink.AddBatch(BatchId(1), Q("SELECT 3 AS a"), OutputMode::kAppend).ok());
  EXPECT_EQ(sink.skipped_batches(), 1);
  EXPECT_EQ(sink.LastNumOutputRows(), 0);
  auto rows = sink.RowStrings();
  std::sort(rows.begin(), rows.end());
  EXPECT_THAT(rows, ElementsAre("1", "2", "3"));
  auto all = sink.AllRows();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->num_rows(), 3);
  EXPECT_EQ(sink.LatestBatchId(), BatchId(1));
}

TEST_F(SinksTest, MemorySinkCompleteReplaces) {
  MemorySink sink;
  ASSERT_TRUE(sink.AddBatch(BatchId(0), Q("SELECT 'a' AS k, 1 AS n"), OutputMode::kComplete).ok());
  ASSERT_TRUE(sink.AddBatch(BatchId(1), Q("SELECT 'a' AS k, 2 AS n UNION ALL SELECT 'b', 1"),
                            OutputMode::kComplete)
                  .ok());
  auto rows = sink.RowStrings();
  std::sort(rows.begin(), rows.end());
  EXPECT_THAT(rows, ElementsAre("a,2", "b,1"));
  EXPECT_EQ(sink.Batches().size(), 1u);
}

TEST_F(SinksTest, ForeachBatchGetsRowsAndIdAndFailureFailsTheBatch) {
  std::vector<std::pair<int64_t, int64_t>> calls;
  ForeachBatchSink sink([&](const engine::Batch& b, BatchId id) {
    calls.emplace_back(id.value(), b.num_rows());
    if (id.value() == 2) return Status::IOError("destination down");
    return Status::OK();
  });
  EXPECT_EQ(sink.Description(), "ForeachBatchSink");
  ASSERT_TRUE(sink.AddBatch(BatchId(0), Q("SELECT 1 AS a"), OutputMode::kAppend).ok());
  ASSERT_TRUE(sink.AddBatch(BatchId(1), Q("SELECT * FROM range(5)"), OutputMode::kAppend).ok());
  Status st = sink.AddBatch(BatchId(2), Q("SELECT 1 AS a"), OutputMode::kAppend);
  EXPECT_TRUE(st.IsIOError());
  EXPECT_NE(st.message().find("batch 2"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("destination down"), std::string::npos);
  // No retry inside: called exactly once per AddBatch.
  EXPECT_EQ(calls, (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 5}, {2, 1}}));
  EXPECT_FALSE(sink.LastNumOutputRows().has_value());
  ForeachBatchSink empty(nullptr);
  EXPECT_TRUE(empty.AddBatch(BatchId(0), Q("SELECT 1"), OutputMode::kAppend).IsInvalidArgument());
}

TEST_F(SinksTest, ForeachBatchExceptionBecomesAStatus) {
  ForeachBatchSink sink(
      [](const engine::Batch&, BatchId) -> Status { throw std::runtime_error("boom"); });
  Status st = sink.AddBatch(BatchId(4), Q("SELECT 1 AS a"), OutputMode::kAppend);
  EXPECT_TRUE(st.IsInternal()) << st.ToString();
  EXPECT_NE(st.message().find("boom"), std::string::npos);
  EXPECT_NE(st.message().find("batch 4"), std::string::npos);
}

TEST_F(SinksTest, ConsolePrintsLikeSpark) {
  std::ostringstream out;
  ConsoleSink sink({}, &out);
  ASSERT_TRUE(sink.AddBatch(BatchId(3),
                            Q("SELECT 1 AS k, 'abc' AS value UNION ALL SELECT 22, NULL"),
                            OutputMode::kAppend)
                  .ok());
  EXPECT_EQ(out.str(),
            "-------------------------------------------\n"
            "Batch: 3\n"
            "-------------------------------------------\n"
            "+---+-----+\n"
            "|  k|value|\n"
            "+---+-----+\n"
            "|  1|  abc|\n"
            "| 22| NULL|\n"
            "+---+-----+\n"
            "\n");
}

TEST_F(SinksTest, ConsoleTruncatesAndLimitsRows) {
  std::ostringstream out;
  ConsoleSink sink({.num_rows = 2, .truncate = true}, &out);
  ASSERT_TRUE(
      sink.AddBatch(BatchId(0), Q("SELECT repeat('x', 25) AS s FROM range(3)"), OutputMode::kAppend)
          .ok());
  EXPECT_EQ(out.str(),
            "-------------------------------------------\n"
            "Batch: 0\n"
            "-------------------------------------------\n"
            "+--------------------+\n"
            "|                   s|\n"
            "+--------------------+\n"
            "|xxxxxxxxxxxxxxxxx...|\n"
            "|xxxxxxxxxxxxxxxxx...|\n"
            "+--------------------+\n"
            "only showing top 2 rows\n");
  EXPECT_EQ(ShowString(Q("SELECT 'ab' AS c"), 20, false), "+---+\n|c  |\n+---+\n|ab |\n+---+\n");
}

}  // namespace
}  // namespace sluice::sinks
