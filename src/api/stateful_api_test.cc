// Tests of stateful streams through the public C++ API (include/sluice/sluice.h): WithWatermark,
// windowed GroupBy/Agg in each output mode, DropDuplicates, DropDuplicatesWithinWatermark,
// stream-stream joins, and the planner's refusals as DataStreamWriter::Start returns them.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "fs/test_util.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

#define ASSERT_OK(expr)                              \
  do {                                               \
    ::sluice::Status _st = ::sluice::ToStatus(expr); \
    ASSERT_TRUE(_st.ok()) << _st.ToString();         \
  } while (false)

class StatefulApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Session::Open({.warehouse = dir_.Join("wh")});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    session_ = std::move(*s);
  }

  std::shared_ptr<MemoryStream> NewStream(const std::string& schema, const std::string& name) {
    auto s = session_->CreateMemoryStream(schema, name);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : nullptr;
  }

  // Rows of a batch query, sorted, as "a,b" strings.
  std::vector<std::string> Sorted(const std::string& sql) {
    auto rows = session_->Sql(sql).Collect();
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    if (!rows.ok()) return {};
    std::vector<std::string> out = rows->RowStrings();
    std::sort(out.begin(), out.end());
    return out;
  }

  // Windowed count of `value` seconds in 5-second windows, watermark delay 10 s.
  DataFrame WindowedCounts(const std::shared_ptr<MemoryStream>& input) {
    return input->ToDF()
        .WithColumn("eventTime", "to_timestamp(value)")
        .WithWatermark("eventTime", "10 seconds")
        .GroupBy({"window(eventTime, '5 seconds')"})
        .Agg({"count(*) AS count"});
  }

  fs::ScopedTempDir dir_{"sluice-stateful-api"};
  std::unique_ptr<Session> session_;
};

TEST_F(StatefulApiTest, WindowedCountInAppendModeEmitsWhenTheWatermarkPasses) {
  auto input = NewStream("value BIGINT", "events");
  ASSERT_NE(input, nullptr);
  auto q = WindowedCounts(input).WriteStream().Format("memory").QueryName("counts").Start();
  ASSERT_OK(q);
  const std::string counts =
      "SELECT epoch(struct_extract(`window`, 'start'))::BIGINT, count FROM counts";

  ASSERT_OK(input->AddSql("VALUES (10), (11), (12), (13), (14), (15)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted(counts), std::vector<std::string>{});  // watermark 5 s: nothing closed

  // [25] moves the watermark to 15 s; the no-data batch after it emits window [10, 15).
  ASSERT_OK(input->AddSql("VALUES (25)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted(counts), (std::vector<std::string>{"10,5"}));

  // A late row for the closed window is dropped and counted.
  ASSERT_OK(input->AddSql("VALUES (10)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted(counts), (std::vector<std::string>{"10,5"}));
  bool dropped = false;
  for (const StreamingQueryProgress& progress : (*q)->RecentProgress()) {
    const std::string& p = progress.Json();
    if (p.find("\"numRowsDroppedByWatermark\":1") != std::string::npos) dropped = true;
  }
  EXPECT_TRUE(dropped);
  auto last = (*q)->LastProgress();
  ASSERT_TRUE(last.has_value());
  EXPECT_NE(last->Json().find("\"watermark\":\"1970-01-01T00:00:15.000Z\""), std::string::npos)
      << last->Json();
  ASSERT_OK((*q)->Stop());
  EXPECT_FALSE((*q)->Exception().has_value());
}

TEST_F(StatefulApiTest, WithoutNoDataBatchesAClosedWindowWaitsForTheNextData) {
  auto opened = Session::Open({.warehouse = dir_.Join("wh2"), .no_data_batches = false});
  ASSERT_OK(opened);
  std::unique_ptr<Session> session = std::move(*opened);
  auto made = session->CreateMemoryStream("value BIGINT", "events");
  ASSERT_OK(made);
  std::shared_ptr<MemoryStream> input = *made;
  auto q = WindowedCounts(input).WriteStream().Format("memory").QueryName("counts").Start();
  ASSERT_OK(q);
  auto rows = [&]() {
    auto r =
        session->Sql("SELECT epoch(struct_extract(`window`, 'start'))::BIGINT, count FROM counts")
            .Collect();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->RowStrings() : std::vector<std::string>{"error"};
  };
  ASSERT_OK(input->AddSql("VALUES (10), (11), (12), (13), (14), (15)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  ASSERT_OK(input->AddSql("VALUES (25)"));  // the watermark becomes 15 s: [10, 15) is closed
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(rows(), std::vector<std::string>{});
  EXPECT_EQ((*q)->LastBatchId(), 1);        // no batch without data
  ASSERT_OK(input->AddSql("VALUES (26)"));  // the next batch runs with watermark 15 s
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(rows(), (std::vector<std::string>{"10,5"}));
  EXPECT_EQ((*q)->LastBatchId(), 2);
}

TEST_F(StatefulApiTest, StateSurvivesARestartOnTheSameCheckpoint) {
  auto input = NewStream("value BIGINT", "events");
  ASSERT_NE(input, nullptr);
  const std::string table = dir_.Join("counts");
  const std::string cp = dir_.Join("cp");
  auto start = [&]() {
    return WindowedCounts(input)
        .WriteStream()
        .Format("delta")
        .Option("checkpointLocation", cp)
        .Start(table);
  };
  auto q = start();
  ASSERT_OK(q);
  ASSERT_OK(input->AddSql("VALUES (10), (11), (12)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  ASSERT_OK((*q)->Stop());
  // The window [10, 15) is in the checkpoint's state; the restarted query finishes it.
  auto again = start();
  ASSERT_OK(again);
  ASSERT_OK(input->AddSql("VALUES (13), (30)"));
  ASSERT_OK((*again)->ProcessAllAvailable());
  auto rows = session_->ReadDelta(table)
                  .SelectExpr({"epoch(struct_extract(`window`, 'start'))::BIGINT AS s", "count"})
                  .Collect();
  ASSERT_OK(rows);
  EXPECT_EQ(rows->RowStrings(), (std::vector<std::string>{"10,4"}));
}

TEST_F(StatefulApiTest, RowTransformationsRunOnTheAggregationsOutput) {
  auto input = NewStream("value BIGINT", "events");
  ASSERT_NE(input, nullptr);
  auto q = WindowedCounts(input)
               .Where("count > 1")
               .WithColumn("start", "epoch(window.start)::BIGINT")
               .SelectExpr({"start", "count * 10 AS tens"})
               .WriteStream()
               .Format("memory")
               .QueryName("big_windows")
               .Start();
  ASSERT_OK(q);
  ASSERT_OK(input->AddSql("VALUES (10), (11), (15), (20), (21), (22)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  ASSERT_OK(input->AddSql("VALUES (40)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  // Windows [10, 15): 2, [15, 20): 1 (filtered out), [20, 25): 3; [40, 45) is still open.
  EXPECT_EQ(Sorted("SELECT * FROM big_windows"), (std::vector<std::string>{"10,20", "20,30"}));
}

TEST_F(StatefulApiTest, UpdateAndCompleteModes) {
  auto input = NewStream("id BIGINT, name STRING", "people");
  ASSERT_NE(input, nullptr);
  DataFrame counts = input->ToDF().GroupBy({"name"}).Count();
  auto complete =
      counts.WriteStream().Format("memory").QueryName("all_counts").OutputMode("complete").Start();
  ASSERT_OK(complete);
  auto update =
      counts.WriteStream().Format("memory").QueryName("changed").OutputMode("update").Start();
  ASSERT_OK(update);
  ASSERT_OK(input->AddSql("VALUES (1, 'a'), (2, 'a'), (3, 'b')"));
  ASSERT_OK((*complete)->ProcessAllAvailable());
  ASSERT_OK((*update)->ProcessAllAvailable());
  ASSERT_OK(input->AddSql("VALUES (4, 'b')"));
  ASSERT_OK((*complete)->ProcessAllAvailable());
  ASSERT_OK((*update)->ProcessAllAvailable());
  // Complete: the whole result of the last batch. Update: each batch's changed keys.
  EXPECT_EQ(Sorted("SELECT * FROM all_counts"), (std::vector<std::string>{"a,2", "b,2"}));
  EXPECT_EQ(Sorted("SELECT * FROM changed"), (std::vector<std::string>{"a,2", "b,1", "b,2"}));
}

TEST_F(StatefulApiTest, GlobalAggregationInUpdateModeKeepsOneRowInDelta) {
  auto input = NewStream("value BIGINT", "events");
  ASSERT_NE(input, nullptr);
  const std::string table = dir_.Join("totals");
  const std::string cp = dir_.Join("cp_totals");
  auto start = [&]() {
    return input->ToDF()
        .GroupBy({})
        .Agg({"count(*) AS n", "sum(value) AS s"})
        .WriteStream()
        .Format("delta")
        .OutputMode("update")
        .Option("checkpointLocation", cp)
        .Start(table);
  };
  auto table_rows = [&]() {
    auto rows = session_->ReadDelta(table).Collect();
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? rows->RowStrings() : std::vector<std::string>{};
  };
  auto q = start();
  ASSERT_OK(q);
  ASSERT_OK(input->AddSql("VALUES (1), (2)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(table_rows(), (std::vector<std::string>{"2,3"}));
  ASSERT_OK(input->AddSql("VALUES (10)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(table_rows(), (std::vector<std::string>{"3,13"}));
  ASSERT_OK((*q)->Stop());
  // The restarted query continues from the state: still one row, replaced.
  auto again = start();
  ASSERT_OK(again);
  ASSERT_OK(input->AddSql("VALUES (100)"));
  ASSERT_OK((*again)->ProcessAllAvailable());
  EXPECT_EQ(table_rows(), (std::vector<std::string>{"4,113"}));
}

TEST_F(StatefulApiTest, GlobalAggregationInUpdateModeGivesForeachBatchTheRow) {
  auto input = NewStream("value BIGINT", "events");
  ASSERT_NE(input, nullptr);
  std::mutex mu;
  std::vector<std::string> seen;  // "<batch id>:<row>" per row
  auto q = input->ToDF()
               .GroupBy({})
               .Agg({"count(*) AS n", "max(value) AS hi"})
               .WriteStream()
               .OutputMode("update")
               .Option("checkpointLocation", dir_.Join("cp_fb_totals"))
               .ForeachBatch([&](const DataFrame& batch, int64_t batch_id) -> Status {
                 SLUICE_ASSIGN_OR_RETURN(auto rows, batch.Collect());
                 std::lock_guard<std::mutex> lock(mu);
                 for (const auto& r : rows.RowStrings()) {
                   seen.push_back(std::to_string(batch_id) + ":" + r);
                 }
                 return Status::OK();
               })
               .Start();
  ASSERT_OK(q);
  ASSERT_OK(input->AddSql("VALUES (1), (5)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  ASSERT_OK(input->AddSql("VALUES (3)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(seen, (std::vector<std::string>{"0:2,5", "1:3,5"}));
}

TEST_F(StatefulApiTest, DropDuplicatesKeepsTheFirstRowOfEachKey) {
  auto input = NewStream("id BIGINT, name STRING", "people");
  ASSERT_NE(input, nullptr);
  auto q = input->ToDF()
               .DropDuplicates({"id"})
               .WriteStream()
               .Format("memory")
               .QueryName("firsts")
               .Start();
  ASSERT_OK(q);
  ASSERT_OK(input->AddSql("VALUES (1, 'a'), (2, 'b')"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  ASSERT_OK(input->AddSql("VALUES (1, 'z'), (3, 'c'), (2, 'y')"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted("SELECT * FROM firsts"), (std::vector<std::string>{"1,a", "2,b", "3,c"}));
  auto all =
      input->ToDF().DropDuplicates().WriteStream().Format("memory").QueryName("rows").Start();
  ASSERT_OK(all);
  ASSERT_OK((*all)->ProcessAllAvailable());
  EXPECT_EQ(Sorted("SELECT * FROM `rows`"),
            (std::vector<std::string>{"1,a", "1,z", "2,b", "2,y", "3,c"}));
}

// Spark 4.2 (PySpark, by hand) allows dropDuplicates() / dropDuplicates(["k", "v"]) followed by
// groupBy("k").count() in update and complete mode; over the rows (a,1) (a,1) (a,2) (b,1) both
// modes gave [Row(k='a', count=2), Row(k='b', count=1)]. (SQL's SELECT DISTINCT in a subquery
// under an aggregation is refused by Spark with the global watermark error, and by Sluice.)
TEST_F(StatefulApiTest, DropDuplicatesFeedsAnAggregationInUpdateAndCompleteMode) {
  auto input = NewStream("k STRING, v BIGINT", "pairs");
  ASSERT_NE(input, nullptr);
  auto all_columns = input->ToDF()
                         .DropDuplicates()
                         .GroupBy({"k"})
                         .Count()
                         .WriteStream()
                         .Format("memory")
                         .QueryName("by_all")
                         .OutputMode("update")
                         .Start();
  ASSERT_OK(all_columns);
  auto some_columns = input->ToDF()
                          .DropDuplicates({"k", "v"})
                          .GroupBy({"k"})
                          .Count()
                          .WriteStream()
                          .Format("memory")
                          .QueryName("by_some")
                          .OutputMode("complete")
                          .Start();
  ASSERT_OK(some_columns);
  ASSERT_OK(input->AddSql("VALUES ('a', 1), ('a', 1), ('a', 2), ('b', 1)"));
  ASSERT_OK((*all_columns)->ProcessAllAvailable());
  ASSERT_OK((*some_columns)->ProcessAllAvailable());
  EXPECT_EQ(Sorted("SELECT * FROM by_all"), (std::vector<std::string>{"a,2", "b,1"}));
  EXPECT_EQ(Sorted("SELECT * FROM by_some"), (std::vector<std::string>{"a,2", "b,1"}));
  // A duplicate in a later batch changes no count.
  ASSERT_OK(input->AddSql("VALUES ('a', 2), ('b', 2)"));
  ASSERT_OK((*all_columns)->ProcessAllAvailable());
  ASSERT_OK((*some_columns)->ProcessAllAvailable());
  EXPECT_EQ(Sorted("SELECT * FROM by_all"), (std::vector<std::string>{"a,2", "b,1", "b,2"}));
  EXPECT_EQ(Sorted("SELECT * FROM by_some"), (std::vector<std::string>{"a,2", "b,2"}));
}

TEST_F(StatefulApiTest, DropDuplicatesWithinWatermarkForgetsKeysAfterTheDelay) {
  auto input = NewStream("id BIGINT, ts TIMESTAMP", "events");
  ASSERT_NE(input, nullptr);
  auto q = input->ToDF()
               .WithWatermark("ts", "10 seconds")
               .DropDuplicatesWithinWatermark({"id"})
               .WriteStream()
               .Format("memory")
               .QueryName("unique_events")
               .Start();
  ASSERT_OK(q);
  const std::string rows = "SELECT id, epoch(ts)::BIGINT FROM unique_events";
  ASSERT_OK(
      input->AddSql("VALUES (1, to_timestamp(1)), (1, to_timestamp(2)), (2, to_timestamp(5))"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted(rows), (std::vector<std::string>{"1,1", "2,5"}));
  // Watermark 5 - 10 < 0: key 1 is still held, so a duplicate at 3 s is dropped.
  ASSERT_OK(input->AddSql("VALUES (1, to_timestamp(3)), (3, to_timestamp(40))"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted(rows), (std::vector<std::string>{"1,1", "2,5", "3,40"}));
  // Watermark 30 s: key 1 (expires at 1 + 10 s) is forgotten; a new row for it at 35 s is kept.
  ASSERT_OK(input->AddSql("VALUES (1, to_timestamp(35))"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted(rows), (std::vector<std::string>{"1,1", "1,35", "2,5", "3,40"}));
}

TEST_F(StatefulApiTest, StreamStreamJoinOfTwoWatermarkedStreams) {
  auto imps = NewStream("ad BIGINT, its TIMESTAMP", "impressions");
  auto clicks = NewStream("ad BIGINT, cts TIMESTAMP", "clicks");
  ASSERT_NE(imps, nullptr);
  ASSERT_NE(clicks, nullptr);
  DataFrame joined =
      imps->ToDF()
          .WithWatermark("its", "10 seconds")
          .Alias("i")
          .Join(clicks->ToDF().WithWatermark("cts", "10 seconds").Alias("c"),
                "c.ad = i.ad AND c.cts BETWEEN i.its AND i.its + INTERVAL 5 SECONDS", "left")
          .SelectExpr({"i.ad AS ad", "epoch(i.its)::BIGINT AS its", "epoch(c.cts)::BIGINT AS cts"});
  ASSERT_OK(joined.status());
  auto q = joined.WriteStream().Format("memory").QueryName("joined").Start();
  ASSERT_OK(q);
  ASSERT_OK(imps->AddSql("VALUES (1, to_timestamp(10)), (2, to_timestamp(11))"));
  ASSERT_OK(clicks->AddSql("VALUES (1, to_timestamp(12))"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted("SELECT * FROM joined"), (std::vector<std::string>{"1,10,12"}));
  // Both watermarks pass 11 + 5 s: impression 2 can no longer match and is emitted with NULL.
  ASSERT_OK(imps->AddSql("VALUES (3, to_timestamp(60))"));
  ASSERT_OK(clicks->AddSql("VALUES (9, to_timestamp(60))"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted("SELECT * FROM joined"), (std::vector<std::string>{"1,10,12", "2,11,NULL"}));
}

TEST_F(StatefulApiTest, StartRefusesWhatTheOutputModeDoesNotSupport) {
  auto input = NewStream("id BIGINT, name STRING, ts TIMESTAMP", "people");
  ASSERT_NE(input, nullptr);
  auto message = [](const Result<std::shared_ptr<StreamingQuery>>& r) {
    return r.ok() ? std::string("started") : r.status().ToString();
  };
  // Append mode aggregation without a watermark (Spark's UnsupportedOperationChecker).
  auto r = input->ToDF().GroupBy({"name"}).Count().WriteStream().Format("console").Start();
  EXPECT_TRUE(r.status().IsInvalidArgument()) << message(r);
  EXPECT_NE(message(r).find("Append output mode not supported when there are streaming "
                            "aggregations on streaming DataFrames/DataSets without watermark"),
            std::string::npos)
      << message(r);
  // Complete mode without an aggregation.
  r = input->ToDF().WriteStream().Format("console").OutputMode("complete").Start();
  EXPECT_NE(message(r).find("Complete output mode not supported when there are no streaming "
                            "aggregations"),
            std::string::npos)
      << message(r);
  // Within-watermark deduplication needs a watermark.
  r = input->ToDF().DropDuplicatesWithinWatermark({"id"}).WriteStream().Format("console").Start();
  EXPECT_NE(message(r).find("without watermark"), std::string::npos) << message(r);
  // A watermark on a column that is not a timestamp; a bad delay is the frame's error.
  r = input->ToDF()
          .WithWatermark("name", "1 minute")
          .DropDuplicates()
          .WriteStream()
          .Format("console")
          .Start();
  EXPECT_NE(message(r).find("Event time must be defined on a window or a timestamp"),
            std::string::npos)
      << message(r);
  EXPECT_TRUE(input->ToDF().WithWatermark("ts", "soon").status().IsInvalidArgument());
  // One stateful operation, and only row transformations after it.
  DataFrame counts =
      input->ToDF().WithWatermark("ts", "1 minute").GroupBy({"window(ts, '1 minute')"}).Count();
  EXPECT_TRUE(counts.Schema().status().IsNotSupported());
  r = counts.Union(counts).WriteStream().Format("console").Start();
  EXPECT_TRUE(r.status().IsNotSupported()) << message(r);
  EXPECT_NE(message(r).find("one stateful operation per query"), std::string::npos) << message(r);
  EXPECT_TRUE(session_->ActiveQueries().empty());
}

}  // namespace
}  // namespace sluice
