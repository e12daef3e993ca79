// Streaming aggregation planned from SQL and driven by the micro-batch loop, reproducing the
// steps of the Spark acceptance files (tests/spark-acceptance: agg-simple-count-complete,
// ewm-append-mode, ewm-update-mode, ewm-event-time-metrics, ewm-session-window-append).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <utility>

#include "plan/planner.h"
#include "sinks/memory_sink.h"
#include "stream/loop_test_util.h"

namespace sluice::plan {
namespace {

using stream::testing::LoopTest;
using stream::testing::TestSourceSpec;

class AggregateLoopTest : public LoopTest {
 protected:
  // A chunk of rows with one INTEGER column `value`.
  engine::Batch Values(const std::vector<int>& v) {
    std::string sql = "SELECT * FROM (VALUES ";
    for (size_t i = 0; i < v.size(); ++i) sql += (i ? ",(" : "(") + std::to_string(v[i]) + ")";
    sql = v.empty() ? "SELECT 0::INTEGER AS value LIMIT 0" : sql + ") t(value)";
    auto b = conn_->Query("SELECT value::INTEGER AS value FROM (" + sql + ")");
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? *b : engine::Batch();
  }
  void Add(const std::vector<int>& v) { stream_->Add(Values(v)); }

  Result<PlannedStreamingQuery> Plan(const std::string& sql, sluice::OutputMode mode) {
    SLUICE_ASSIGN_OR_RETURN(auto parsed, ParseStreamingQuery(sql));
    StreamingQuerySpec spec;
    spec.query = std::move(parsed);
    spec.output_mode = mode;
    return PlanStreamingQuery(engine_, spec);
  }

  // Starts (or restarts) the query; the sink keeps what it got.
  void Start(const std::string& sql, sluice::OutputMode mode, int partitions = 5,
             const std::string& provider = "memory",
             std::shared_ptr<stream::SharedWatermark> shared_watermark = nullptr) {
    stream_->schema = Values({}).schema();
    auto planned = Plan(sql, mode);
    ASSERT_TRUE(planned.ok()) << planned.status().ToString();
    update_keys_ = planned->update_keys;
    stream::ExecutionOptions o = Options();
    o.output_mode = mode;
    o.session_conf["sluice.sql.shuffle.partitions"] = std::to_string(partitions);
    o.session_conf["sluice.streaming.stateStore.providerClass"] = provider;
    o.shared_watermark = std::move(shared_watermark);
    std::vector<stream::SourceSpec> specs;
    specs.push_back(TestSourceSpec(stream_));
    if (query_) {
      ASSERT_TRUE(query_->Stop().ok());
    }
    query_.reset();
    auto q = stream::MicroBatchExecution::Start(std::move(o), std::move(specs),
                                                std::move(planned->plan), stream::FixedSink(sink_));
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    query_ = std::move(*q);
  }

  void Run() {
    Status st = query_->ProcessAllAvailable();
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // The rows of the last batch with rows (all batches' rows for append/update).
  std::vector<std::string> Rows() { return Sorted(sink_->RowStrings()); }

  const stream::StreamingQueryProgress& Last() {
    last_ = query_->RecentProgress();
    return last_.back();
  }
  // The progress of the last batch with input rows.
  stream::StreamingQueryProgress LastWithInput() {
    auto all = query_->RecentProgress();
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      if (it->NumInputRows() > 0) return *it;
    }
    return {};
  }

  void TearDown() override {
    if (query_) {
      EXPECT_TRUE(query_->Stop().ok());
    }
  }

  std::shared_ptr<sinks::MemorySink> sink_ = std::make_shared<sinks::MemorySink>();
  std::unique_ptr<stream::MicroBatchExecution> query_;
  std::vector<stream::StreamingQueryProgress> last_;
  std::vector<std::string> update_keys_;
};

constexpr char kWindowedCount[] =
    "SELECT epoch(window.start)::BIGINT AS start, count(*) AS count "
    "FROM STREAM input WATERMARK timestamp_seconds(value) AS eventTime DELAY OF INTERVAL 10 "
    "SECONDS AS i GROUP BY window(eventTime, '5 seconds')";

// A watermark shared with other queries (group mode's tasks, stream/shared_watermark.h): the
// loop runs with what Combine gives, publishes its own after each commit, and when the shared
// watermark moves while it has no data, runs a no-data batch that emits the windows it passed.
class FakeSharedWatermark final : public stream::SharedWatermark {
 public:
  Result<int64_t> Combine(int64_t own_ms) override { return std::min(own_ms, others_ms.load()); }
  Status Publish(BatchId batch_id, int64_t own_ms) override {
    std::lock_guard<std::mutex> lock(mu);
    published.emplace_back(batch_id.value(), own_ms);
    return Status::OK();
  }
  std::atomic<int64_t> others_ms{0};
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> published;
};

TEST_F(AggregateLoopTest, ASharedWatermarkHoldsWindowsUntilTheOthersMoveIt) {
  auto shared = std::make_shared<FakeSharedWatermark>();
  Start(kWindowedCount, sluice::OutputMode::kAppend, 5, "memory", shared);
  Add({1, 2, 3, 21});  // own watermark 21 s - 10 s = 11 s: past the window [0, 5)
  Run();
  EXPECT_TRUE(Rows().empty()) << "the others' watermark (0) holds the window back";
  EXPECT_EQ(query_->CurrentWatermarkMs(), 0);
  {
    std::lock_guard<std::mutex> lock(shared->mu);
    ASSERT_FALSE(shared->published.empty());
    EXPECT_EQ(shared->published.back(), (std::pair<int64_t, int64_t>{0, 11000}));
  }
  shared->others_ms = 11000;  // the others moved: an idle trigger sees it
  for (int i = 0; i < 400 && Rows().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_EQ(Rows(), (std::vector<std::string>{"0,3"}));
  EXPECT_EQ(query_->CurrentWatermarkMs(), 11000);
}

TEST_F(AggregateLoopTest, SimpleCountCompleteSurvivesRestart) {
  const std::string sql = "SELECT value, count(*) AS count FROM STREAM input GROUP BY value";
  Start(sql, sluice::OutputMode::kComplete);
  Add({3});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"3,1"}));
  Add({2});
  Run();
  // Complete: the sink keeps every batch; the last batch is the whole result.
  EXPECT_EQ(Last().state_operators.at(0).num_rows_total, 2);
  sink_ = std::make_shared<sinks::MemorySink>();
  Start(sql, sluice::OutputMode::kComplete);  // restart on the same checkpoint
  Add({3, 2, 1});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"1,1", "2,2", "3,2"}));
  sink_ = std::make_shared<sinks::MemorySink>();
  Start(sql, sluice::OutputMode::kComplete);
  Add({4, 4, 4, 4});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"1,1", "2,2", "3,2", "4,4"}));
  EXPECT_EQ(Last().state_operators.at(0).operator_name, "stateStoreSave");
  EXPECT_EQ(Last().state_operators.at(0).num_rows_total, 4);
  EXPECT_EQ(Last().state_operators.at(0).num_rows_updated, 1);
}

TEST_F(AggregateLoopTest, AppendModeEmitsClosedWindowsAndDropsLateRows) {
  Start(kWindowedCount, sluice::OutputMode::kAppend);
  Add({10, 11, 12, 13, 14, 15});
  Run();
  EXPECT_TRUE(Rows().empty());
  EXPECT_EQ(Last().batch_id, 1);  // batch 0 + the no-data batch 1 (watermark 5 s)
  Add({25});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"10,5"}));
  EXPECT_EQ(Last().batch_id, 3);
  EXPECT_EQ(Last().state_operators.at(0).num_rows_total, 2);
  EXPECT_EQ(Last().event_time.at("watermark"), "1970-01-01T00:00:15.000Z");
  EXPECT_EQ(LastWithInput().state_operators.at(0).num_rows_dropped_by_watermark, 0);
  Add({10});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"10,5"}));
  EXPECT_EQ(Last().state_operators.at(0).num_rows_total, 2);
  EXPECT_EQ(LastWithInput().state_operators.at(0).num_rows_dropped_by_watermark, 1);
}

// The defaults a streaming table gets: RocksDB state, 200 partitions.
TEST_F(AggregateLoopTest, AppendModeWithRocksDbAndTheDefaultPartitions) {
  Start(kWindowedCount, sluice::OutputMode::kAppend, 200, "rocksdb");
  Add({10, 11, 12, 13, 14, 15});
  Run();
  Add({25});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"10,5"}));
  EXPECT_EQ(Last().state_operators.at(0).num_rows_total, 2);
  EXPECT_EQ(Last().state_operators.at(0).num_state_store_instances, 200);
  sink_ = std::make_shared<sinks::MemorySink>();
  Start(kWindowedCount, sluice::OutputMode::kAppend, 200, "rocksdb");  // restart
  Add({10, 26});
  Run();
  EXPECT_TRUE(Rows().empty());
  EXPECT_EQ(LastWithInput().state_operators.at(0).num_rows_dropped_by_watermark, 1);
  EXPECT_EQ(LastWithInput().state_operators.at(0).num_rows_total, 2);
}

TEST_F(AggregateLoopTest, UpdateModeEmitsChangedWindowsAndEvictsSilently) {
  Start(kWindowedCount, sluice::OutputMode::kUpdate, 10);
  EXPECT_EQ(update_keys_, std::vector<std::string>{"start"});
  Add({10, 11, 12, 13, 14, 15});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"10,5", "15,1"}));
  Add({25});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"10,5", "15,1", "25,1"}));
  EXPECT_EQ(Last().state_operators.at(0).num_rows_total, 2);
  EXPECT_EQ(Last().event_time.at("watermark"), "1970-01-01T00:00:15.000Z");
  Add({10, 25});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"10,5", "15,1", "25,1", "25,2"}));
  EXPECT_EQ(Last().state_operators.at(0).num_rows_total, 2);
  EXPECT_EQ(LastWithInput().state_operators.at(0).num_rows_dropped_by_watermark, 1);
  Add({10});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"10,5", "15,1", "25,1", "25,2"}));
  EXPECT_EQ(LastWithInput().state_operators.at(0).num_rows_dropped_by_watermark, 1);
}

TEST_F(AggregateLoopTest, EventTimeMetricsAndNoDataBatches) {
  Start(kWindowedCount, sluice::OutputMode::kAppend);
  Add({15});
  Run();
  auto p = LastWithInput();
  EXPECT_EQ(p.event_time.at("min"), "1970-01-01T00:00:15.000Z");
  EXPECT_EQ(p.event_time.at("max"), "1970-01-01T00:00:15.000Z");
  EXPECT_EQ(p.event_time.at("avg"), "1970-01-01T00:00:15.000Z");
  EXPECT_EQ(p.event_time.at("watermark"), "1970-01-01T00:00:00.000Z");
  Add({10, 12, 14});
  Run();
  p = LastWithInput();
  EXPECT_EQ(p.event_time.at("min"), "1970-01-01T00:00:10.000Z");
  EXPECT_EQ(p.event_time.at("max"), "1970-01-01T00:00:14.000Z");
  EXPECT_EQ(p.event_time.at("avg"), "1970-01-01T00:00:12.000Z");
  EXPECT_EQ(p.event_time.at("watermark"), "1970-01-01T00:00:05.000Z");
  Add({25});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"10,3"}));
  EXPECT_EQ(Last().batch_id, 4);
  EXPECT_EQ(Last().NumInputRows(), 0);
  EXPECT_EQ(Last().event_time.at("watermark"), "1970-01-01T00:00:15.000Z");
}

TEST_F(AggregateLoopTest, WindowWithoutWatermarkHasNoEventTimeStats) {
  Start(
      "SELECT epoch(window.start)::BIGINT AS start, count(*) AS count FROM STREAM input_nowm "
      "GROUP BY window(timestamp_seconds(value), '5 seconds')",
      sluice::OutputMode::kComplete);
  Add({15});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"15,1"}));
  EXPECT_TRUE(LastWithInput().event_time.empty());
  sink_ = std::make_shared<sinks::MemorySink>();
  Start(
      "SELECT epoch(window.start)::BIGINT AS start, count(*) AS count FROM STREAM input_nowm "
      "GROUP BY window(timestamp_seconds(value), '5 seconds')",
      sluice::OutputMode::kComplete);
  Add({10, 12, 14});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"10,3", "15,1"}));
}

TEST_F(AggregateLoopTest, SessionWindowAppend) {
  Start(
      "SELECT value // 10 AS valuegroup, epoch(session_window.start)::BIGINT AS session_start, "
      "epoch(session_window.end)::BIGINT AS session_end, count(*) AS count, sum(value) AS "
      "total FROM STREAM input WATERMARK timestamp_seconds(value) AS eventTime DELAY OF "
      "INTERVAL 10 SECONDS AS i GROUP BY session_window(eventTime, '5 seconds'), value // 10",
      sluice::OutputMode::kAppend);
  Add({10, 11});
  Run();
  EXPECT_TRUE(Rows().empty());
  Add({17});
  Run();
  EXPECT_TRUE(Rows().empty());
  EXPECT_EQ(Last().event_time.at("watermark"), "1970-01-01T00:00:07.000Z");
  Add({25});
  Run();
  EXPECT_TRUE(Rows().empty());
  EXPECT_EQ(Last().event_time.at("watermark"), "1970-01-01T00:00:15.000Z");
  Add({35});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"1,10,16,2,21", "1,17,22,1,17"}));
  EXPECT_EQ(Last().event_time.at("watermark"), "1970-01-01T00:00:25.000Z");
  EXPECT_EQ(Last().state_operators.at(0).operator_name, "sessionWindowStateStoreSaveExec");
  Add({10});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"1,10,16,2,21", "1,17,22,1,17"}));
  Add({40});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"1,10,16,2,21", "1,17,22,1,17", "2,25,30,1,25"}));
  EXPECT_EQ(Last().event_time.at("watermark"), "1970-01-01T00:00:30.000Z");
}

TEST_F(AggregateLoopTest, SlidingWindowsPutARowInEveryWindow) {
  Start(
      "SELECT epoch(window.start)::BIGINT AS s, epoch(window.end)::BIGINT AS e, count(*) AS n, "
      "min(value) AS lo, max(value) AS hi, avg(value) AS mean, first(value) AS f, last(value) "
      "AS l FROM STREAM input GROUP BY window(timestamp_seconds(value), '10 seconds', "
      "'5 seconds')",
      sluice::OutputMode::kComplete);
  Add({7, 12});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"0,10,1,7,7,7.0,7,7", "10,20,1,12,12,12.0,12,12",
                                              "5,15,2,7,12,9.5,7,12"}));
  sink_ = std::make_shared<sinks::MemorySink>();
  Start(
      "SELECT epoch(window.start)::BIGINT AS s, epoch(window.end)::BIGINT AS e, count(*) AS n, "
      "min(value) AS lo, max(value) AS hi, avg(value) AS mean, first(value) AS f, last(value) "
      "AS l FROM STREAM input GROUP BY window(timestamp_seconds(value), '10 seconds', "
      "'5 seconds')",
      sluice::OutputMode::kComplete);
  Add({9});
  Run();
  EXPECT_EQ(Rows(), (std::vector<std::string>{"0,10,2,7,9,8.0,7,9", "10,20,1,12,12,12.0,12,12",
                                              "5,15,3,7,12,9.333333333333334,7,9"}));
}

}  // namespace
}  // namespace sluice::plan
