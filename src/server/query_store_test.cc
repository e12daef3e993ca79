#include "server/query_store.h"

#include <cmath>

#include <gtest/gtest.h>

#include "server/test_util.h"

namespace sluice::server {
namespace {

using testing::MakeProgress;

TEST(QueryStoreTest, KeepsABoundedRingNewestLast) {
  QueryStore store(QueryStoreOptions{3, 10000});
  store.OnStarted("a", "r1", "q", 0);
  for (int64_t b = 0; b < 5; ++b) store.OnProgress(MakeProgress("a", "r1", b, 10, 5, 5), 1);
  auto all = store.Progress("a", 100);
  ASSERT_TRUE(all.has_value());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].batch_id, 2);
  EXPECT_EQ((*all)[2].batch_id, 4);
  auto two = store.Progress("a", 2);
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].batch_id, 3);
  EXPECT_EQ((*two)[1].batch_id, 4);
  EXPECT_FALSE(store.Progress("nope", 2).has_value());
  // Counters cover every batch, not only the ring's.
  QuerySnapshot s = store.Snapshot(1)[0];
  EXPECT_EQ(s.num_batches_total, 5);
  EXPECT_EQ(s.num_input_rows_total, 50);
  EXPECT_EQ(s.last_progress->batch_id, 4);
}

TEST(QueryStoreTest, OutputRowsAreSummedWhereTheSinkReportsThem) {
  QueryStore store(QueryStoreOptions{3, 10000});
  store.OnStarted("a", "r1", "q", 0);
  stream::StreamingQueryProgress p = MakeProgress("a", "r1", 0, 10, 5, 5);
  p.sink.num_output_rows = -1;  // foreachBatch: unknown
  store.OnProgress(p, 1);
  EXPECT_FALSE(store.Snapshot(1)[0].num_output_rows_total.has_value());
  p.batch_id = 1;
  p.sink.num_output_rows = 4;
  store.OnProgress(p, 1);
  p.batch_id = 2;
  p.sink.num_output_rows = 0;
  store.OnProgress(p, 1);
  p.batch_id = 3;
  p.sink.num_output_rows = 6;
  store.OnProgress(p, 1);
  EXPECT_EQ(store.Snapshot(1)[0].num_output_rows_total, 10);
}

TEST(QueryStoreTest, StatusFollowsTheQueryLife) {
  QueryStore store(QueryStoreOptions{300, 1000});
  store.SetTrigger("a", "ProcessingTime(2000 ms)", 2000);
  store.OnStarted("a", "r1", "q", 0);
  EXPECT_EQ(store.Snapshot(10)[0].status, QueryStatus::kActive);
  // Idle after max(idle_after_ms, 2 x interval) = 4000 ms without a batch.
  EXPECT_EQ(store.Snapshot(4000)[0].status, QueryStatus::kActive);
  EXPECT_EQ(store.Snapshot(4001)[0].status, QueryStatus::kIdle);
  store.OnProgress(MakeProgress("a", "r1", 0, 1, 1, 1), 5000);
  EXPECT_EQ(store.Snapshot(5001)[0].status, QueryStatus::kActive);
  store.OnIdle("a", "r1");
  EXPECT_EQ(store.Snapshot(5002)[0].status, QueryStatus::kIdle);
  store.OnTerminated("a", "r1", "Invalid argument: batch 3: reading /in/f.json: bad");
  QuerySnapshot failed = store.Snapshot(6000)[0];
  EXPECT_EQ(failed.status, QueryStatus::kFailed);
  EXPECT_EQ(failed.failures_total, 1);
  ASSERT_TRUE(failed.error.has_value());
  EXPECT_EQ(failed.error->contexts,
            (std::vector<std::string>{"Invalid argument", "batch 3", "reading /in/f.json", "bad"}));
  EXPECT_EQ(failed.trigger, "ProcessingTime(2000 ms)");
  // A restart is scheduled, then a new run of the same query: active again, the failure count
  // and the last error kept.
  store.OnRestarting("a", "r1");
  EXPECT_EQ(store.Snapshot(6001)[0].status, QueryStatus::kRestarting);
  store.OnStarted("a", "r2", "q", 7000);
  QuerySnapshot restarted = store.Snapshot(7001)[0];
  EXPECT_EQ(restarted.status, QueryStatus::kActive);
  EXPECT_EQ(restarted.run_id, "r2");
  EXPECT_EQ(restarted.failures_total, 1);
  EXPECT_TRUE(restarted.error.has_value());
  store.OnRestarting("a", "r2");  // not failed: nothing changes
  EXPECT_EQ(store.Snapshot(7001)[0].status, QueryStatus::kActive);
  // A late end of the old run changes nothing.
  store.OnTerminated("a", "r1", std::nullopt);
  EXPECT_EQ(store.Snapshot(7002)[0].status, QueryStatus::kActive);
  store.OnTerminated("a", "r2", std::nullopt);
  EXPECT_EQ(store.Snapshot(7003)[0].status, QueryStatus::kTerminated);
}

TEST(QueryStoreTest, RestartingMayComeBeforeTheEndOfTheRun) {
  QueryStore store;
  store.OnStarted("a", "r1", "q", 0);
  store.OnRestarting("a", "r1");
  EXPECT_EQ(store.Snapshot(1)[0].status, QueryStatus::kActive);
  store.OnTerminated("a", "r1", "Internal: boom");
  QuerySnapshot s = store.Snapshot(2)[0];
  EXPECT_EQ(s.status, QueryStatus::kRestarting);
  EXPECT_EQ(s.failures_total, 1);
  EXPECT_EQ(s.error->message, "Internal: boom");
}

TEST(QueryStoreTest, QueriesKeepTheOrderTheyWereFirstSeen) {
  QueryStore store;
  store.OnStarted("b", "r", "second", 0);
  store.OnStarted("a", "r", "first", 0);
  auto s = store.Snapshot(0);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].id, "b");
  EXPECT_EQ(s[1].id, "a");
}

TEST(FallingBehindTest, ThreeBatchesSlowerThanTheirInput) {
  std::deque<stream::StreamingQueryProgress> recent;
  recent.push_back(MakeProgress("a", "r", 0, 100, 50, 40));
  recent.push_back(MakeProgress("a", "r", 1, 100, 50, 40));
  EXPECT_FALSE(FallingBehind(recent, 0).has_value());
  // A batch without input does not break the run of slow ones, nor count.
  recent.push_back(MakeProgress("a", "r", 2, 0, 0, 0));
  EXPECT_FALSE(FallingBehind(recent, 0).has_value());
  recent.push_back(MakeProgress("a", "r", 3, 100, 50, 40));
  std::optional<std::string> why = FallingBehind(recent, 0);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("processed rows/s below input rows/s"), std::string::npos) << *why;
  // One batch that keeps up ends it.
  recent.push_back(MakeProgress("a", "r", 4, 100, 50, 60));
  EXPECT_FALSE(FallingBehind(recent, 0).has_value());
  // An unknown input rate (a run's first batch) is not evidence.
  std::deque<stream::StreamingQueryProgress> first;
  for (int i = 0; i < 3; ++i) {
    first.push_back(MakeProgress("a", "r", i, 10, std::nan(""), 5));
  }
  EXPECT_FALSE(FallingBehind(first, 0).has_value());
}

TEST(FallingBehindTest, BatchLongerThanTheTriggerInterval) {
  std::deque<stream::StreamingQueryProgress> recent;
  recent.push_back(MakeProgress("a", "r", 7, 10, 5, 5, /*duration_ms=*/1500));
  std::optional<std::string> why = FallingBehind(recent, 1000);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "batch 7 took 1500 ms, longer than the trigger interval of 1000 ms");
  EXPECT_FALSE(FallingBehind(recent, 2000).has_value());
  EXPECT_FALSE(FallingBehind(recent, 0).has_value());  // the default trigger has no interval
}

TEST(QueryStoreTest, FallingBehindOnlyWhileActive) {
  QueryStore store;
  store.OnStarted("a", "r", "q", 0);
  for (int64_t b = 0; b < 3; ++b) store.OnProgress(MakeProgress("a", "r", b, 10, 50, 20), 1);
  QuerySnapshot s = store.Snapshot(2)[0];
  EXPECT_TRUE(s.falling_behind);
  EXPECT_FALSE(s.falling_behind_reason.empty());
  store.OnTerminated("a", "r", std::nullopt);
  EXPECT_FALSE(store.Snapshot(3)[0].falling_behind);
}

TEST(QueryStoreTest, SumsDroppedAndRescuedRowsOverBatches) {
  QueryStore store;
  store.OnStarted("a", "r", "q", 0);
  for (int64_t b = 0; b < 2; ++b) {
    stream::StreamingQueryProgress p = MakeProgress("a", "r", b, 10, 5, 5);
    stream::StateOperatorProgress op;
    op.operator_name = "stateStoreSave";
    op.num_rows_dropped_by_watermark = 3;
    p.state_operators.push_back(op);
    p.sources[0].metrics["numRescuedRows"] = "2";
    store.OnProgress(p, 1);
  }
  QuerySnapshot s = store.Snapshot(1)[0];
  EXPECT_EQ(s.rows_dropped_by_watermark_total.at(0), 6);
  EXPECT_EQ(s.rescued_rows_total.at(0), 4);
}

TEST(MakeQueryErrorTest, SplitsTheContextChain) {
  EXPECT_EQ(MakeQueryError("plain").contexts, std::vector<std::string>{"plain"});
  QueryError e = MakeQueryError("IO error: writing /x: No space left on device");
  EXPECT_EQ(e.message, "IO error: writing /x: No space left on device");
  EXPECT_EQ(e.contexts,
            (std::vector<std::string>{"IO error", "writing /x", "No space left on device"}));
}

}  // namespace
}  // namespace sluice::server
