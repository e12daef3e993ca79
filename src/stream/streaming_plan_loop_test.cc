// Stateless streaming plans from SQL, driven by the micro-batch loop: the __stream_i views with
// their event-time column, per-watermark event-time stats after the filters that run before the
// watermark, and static relations through prepare_connection.
#include <gtest/gtest.h>

#include "plan/planner.h"
#include "sinks/memory_sink.h"
#include "stream/loop_test_util.h"

namespace sluice::plan {
namespace {

using stream::testing::LoopTest;
using stream::testing::TestSourceSpec;
using stream::testing::TestStream;

class StreamingPlanLoopTest : public LoopTest {
 protected:
  engine::Batch Values(const std::vector<int>& v) {
    std::string sql = "SELECT * FROM (VALUES ";
    for (size_t i = 0; i < v.size(); ++i) sql += (i ? ",(" : "(") + std::to_string(v[i]) + ")";
    sql = v.empty() ? "SELECT 0::INTEGER AS value LIMIT 0" : sql + ") t(value)";
    auto b = conn_->Query("SELECT value::INTEGER AS value FROM (" + sql + ")");
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? *b : engine::Batch();
  }

  Result<std::unique_ptr<stream::MicroBatchExecution>> StartSql(
      const std::string& sql, std::vector<std::shared_ptr<TestStream>> streams,
      std::shared_ptr<sinks::MemorySink> sink, stream::ExecutionOptions o) {
    SLUICE_ASSIGN_OR_RETURN(auto parsed, ParseStreamingQuery(sql));
    StreamingQuerySpec spec;
    spec.query = std::move(parsed);
    SLUICE_ASSIGN_OR_RETURN(auto planned, PlanStreamingQuery(engine_, spec));
    std::vector<stream::SourceSpec> specs;
    for (auto& s : streams) {
      s->schema = Values({}).schema();
      specs.push_back(TestSourceSpec(s));
    }
    return stream::MicroBatchExecution::Start(std::move(o), std::move(specs),
                                              std::move(planned.plan), stream::FixedSink(sink));
  }
};

TEST_F(StreamingPlanLoopTest, UnionOfTwoWatermarkedStreamsUsesTheMinPolicy) {
  auto a = std::make_shared<TestStream>("a");
  auto b = std::make_shared<TestStream>("b");
  auto sink = std::make_shared<sinks::MemorySink>();
  const std::string sql =
      "SELECT epoch(eventTime)::INTEGER AS event_time FROM (\n"
      "  SELECT eventTime FROM STREAM input1 WATERMARK timestamp_seconds(value) AS eventTime "
      "DELAY OF INTERVAL 10 SECONDS AS a\n  UNION ALL\n"
      "  SELECT eventTime FROM STREAM input2 WATERMARK timestamp_seconds(value) AS eventTime "
      "DELAY OF INTERVAL 15 SECONDS AS b\n)";
  auto q = StartSql(sql, {a, b}, sink, Options());
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  a->Add(Values({20}));
  b->Add(Values({30}));
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  EXPECT_EQ(Sorted(sink->RowStrings()), (std::vector<std::string>{"20", "30"}));
  a->Add(Values({1}));
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  EXPECT_EQ((*q)->LastProgress()->event_time.at("watermark"), "1970-01-01T00:00:10.000Z");
  a->Add(Values({120}));
  b->Add(Values({130}));
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  b->Add(Values({1}));
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  EXPECT_EQ((*q)->LastProgress()->event_time.at("watermark"), "1970-01-01T00:01:50.000Z");
  b->Add(Values({150}));
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  b->Add(Values({1}));
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  EXPECT_EQ((*q)->LastProgress()->event_time.at("watermark"), "1970-01-01T00:01:50.000Z");
  EXPECT_EQ(Sorted(sink->RowStrings()),
            (std::vector<std::string>{"1", "1", "1", "120", "130", "150", "20", "30"}));
  ASSERT_TRUE((*q)->Stop().ok());
}

TEST_F(StreamingPlanLoopTest, FilterWithoutEventTimeRunsBeforeTheWatermark) {
  auto s = std::make_shared<TestStream>("s");
  auto sink = std::make_shared<sinks::MemorySink>();
  // e.value < 100 runs before the watermark (it does not use the event time): the 500 never
  // reaches the watermark node, so the max event time is 50 s and the next watermark 40 s.
  auto q = StartSql(
      "SELECT value FROM STREAM t WATERMARK timestamp_seconds(value) AS ts DELAY OF INTERVAL 10 "
      "SECONDS AS e WHERE e.value < 100 AND ts > TIMESTAMPTZ '1970-01-01 00:00:00+00'",
      {s}, sink, Options());
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  s->Add(Values({50, 500}));
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  auto p = (*q)->LastProgress();
  EXPECT_EQ(p->event_time.at("max"), "1970-01-01T00:00:50.000Z");
  EXPECT_EQ(sink->RowStrings(), std::vector<std::string>{"50"});
  s->Add(Values({1}));
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  EXPECT_EQ((*q)->LastProgress()->event_time.at("watermark"), "1970-01-01T00:00:40.000Z");
  ASSERT_TRUE((*q)->Stop().ok());
}

TEST_F(StreamingPlanLoopTest, StaticRelationThroughPrepareConnection) {
  auto s = std::make_shared<TestStream>("s");
  auto sink = std::make_shared<sinks::MemorySink>();
  stream::ExecutionOptions o = Options();
  o.prepare_connection = [](engine::Connection& c) {
    return c.Execute(
        "CREATE OR REPLACE TEMP VIEW dims AS SELECT * FROM (VALUES (1, 'one'), (2, 'two')) "
        "d(id, name)");
  };
  auto q = StartSql("SELECT s.value, d.name FROM STREAM t AS s JOIN dims d ON s.value = d.id", {s},
                    sink, std::move(o));
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  s->Add(Values({1, 2, 3}));
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  EXPECT_EQ(Sorted(sink->RowStrings()), (std::vector<std::string>{"1,one", "2,two"}));
  ASSERT_TRUE((*q)->Stop().ok());
}

TEST_F(StreamingPlanLoopTest, TumblingWindowAsAValue) {
  auto s = std::make_shared<TestStream>("s");
  auto sink = std::make_shared<sinks::MemorySink>();
  auto q = StartSql(
      "SELECT value, epoch(w.start)::BIGINT AS ws, epoch(w.end)::BIGINT AS we FROM (SELECT value, "
      "window(timestamp_seconds(value), '10 seconds') AS w FROM STREAM t)",
      {s}, sink, Options());
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  s->Add(Values({7, 10, 23}));
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  EXPECT_EQ(Sorted(sink->RowStrings()),
            (std::vector<std::string>{"10,10,20", "23,20,30", "7,0,10"}));
  ASSERT_TRUE((*q)->Stop().ok());
}

}  // namespace
}  // namespace sluice::plan
