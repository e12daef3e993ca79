// Triggers in the loop: Once, AvailableNow (with read limits and the fallback), ProcessingTime
// with a ManualClock (slots, falling behind).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "stream/loop_test_util.h"
#include "stream/offset_seq_log.h"

namespace sluice::stream {
namespace {

using testing::LoopTest;

class TriggerExecutionTest : public LoopTest {
 protected:
  std::vector<int64_t> BatchSizes(const sinks::MemorySink& sink) {
    std::vector<int64_t> out;
    for (const auto& [id, b] : sink.Batches()) out.push_back(b.num_rows());
    return out;
  }
  template <typename Pred>
  bool WaitFor(Pred pred, int64_t timeout_ms = 10000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!pred()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }
};

TEST_F(TriggerExecutionTest, OnceRunsOneBatchOfEverythingIgnoringReadLimits) {
  auto sink = std::make_shared<sinks::MemorySink>();
  AddInts({1});
  AddInts({2});
  AddInts({3});
  auto o = Options();
  o.trigger = Trigger::Once();
  auto q = StartQuery(o, FixedSink(sink), "SELECT id FROM __source_0", {.max_files = 1});
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE((*q)->AwaitTermination().ok());
  EXPECT_EQ(BatchSizes(*sink), std::vector<int64_t>{3});
  EXPECT_EQ(Ids(root_ + "/offsets"), std::vector<int64_t>{0});
  // Once with nothing new constructs no batch.
  auto again = StartQuery(o, FixedSink(sink));
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE((*again)->AwaitTermination().ok());
  EXPECT_EQ(Ids(root_ + "/offsets"), std::vector<int64_t>{0});
}

TEST_F(TriggerExecutionTest, OnceReRunsOnlyTheUncommittedBatch) {
  auto sink = std::make_shared<sinks::MemorySink>();
  AddInts({1, 2});
  auto o = Options();
  o.test_crash_at = std::string(kCrashAfterStateCommit);
  {
    auto q = StartQuery(o, FixedSink(sink));
    ASSERT_TRUE(q.ok());
    EXPECT_TRUE((*q)->AwaitTermination().IsCancelled());
  }
  AddInts({3});
  o = Options();
  o.trigger = Trigger::Once();
  auto q = StartQuery(o, FixedSink(sink));
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE((*q)->AwaitTermination().ok());
  EXPECT_EQ(Sorted(sink->RowStrings()), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(Ids(root_ + "/commits"), std::vector<int64_t>{0});
  EXPECT_EQ((*q)->NextBatchId(), BatchId(1));
}

TEST_F(TriggerExecutionTest, AvailableNowProcessesTheSnapshotInLimitedBatchesThenStops) {
  auto sink = std::make_shared<sinks::MemorySink>();
  for (int i = 0; i < 5; ++i) AddInts({i});
  auto o = Options();
  o.trigger = Trigger::AvailableNow();
  auto q = StartQuery(o, FixedSink(sink), "SELECT id FROM __source_0", {.max_files = 2});
  ASSERT_TRUE(q.ok());
  AddInts({100});  // after the snapshot: not processed by this run
  ASSERT_TRUE((*q)->AwaitTermination().ok());
  EXPECT_EQ(BatchSizes(*sink), (std::vector<int64_t>{2, 2, 1}));
  EXPECT_EQ(Sorted(sink->RowStrings()), Range(0, 5));
  EXPECT_EQ(Ids(root_ + "/offsets"), (std::vector<int64_t>{0, 1, 2}));
}

TEST_F(TriggerExecutionTest, AvailableNowFallsBackToOneBatchWhenUnsupported) {
  auto sink = std::make_shared<sinks::MemorySink>();
  stream_->supports_available_now = false;
  for (int i = 0; i < 3; ++i) AddInts({i});
  auto o = Options();
  o.trigger = Trigger::AvailableNow();
  auto q = StartQuery(o, FixedSink(sink), "SELECT id FROM __source_0", {.max_files = 1});
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE((*q)->AwaitTermination().ok());
  EXPECT_EQ(BatchSizes(*sink), std::vector<int64_t>{3});
}

// A plan that advances a ManualClock while it runs, to make a batch overrun its slot.
class SlowPlan final : public IncrementalPlan {
 public:
  SlowPlan(std::shared_ptr<ManualClock> clock, int64_t advance_ms)
      : inner_("SELECT id FROM __source_0", 1), clock_(std::move(clock)), advance_ms_(advance_ms) {}
  Status Open(const PlanContext& c) override { return inner_.Open(c); }
  size_t num_sources() const override { return 1; }
  Result<PlanOutput> Execute(const PlanInput& in) override {
    clock_->Advance(advance_ms_);
    return inner_.Execute(in);
  }
  std::string Description() const override { return "SlowPlan"; }

 private:
  SqlPlan inner_;
  std::shared_ptr<ManualClock> clock_;
  int64_t advance_ms_;
};

TEST_F(TriggerExecutionTest, ProcessingTimeRunsOnSlotsAndFallsBehindWithoutReplay) {
  auto clock = std::make_shared<ManualClock>(10'000);
  auto sink = std::make_shared<sinks::MemorySink>();
  AddInts({1});
  auto o = Options();
  o.clock = clock;
  o.trigger = *Trigger::ProcessingTime(1000);
  auto q = StartQuery(o, FixedSink(sink));
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE(WaitFor([&] { return (*q)->NextBatchId() == BatchId(1); }));
  // Data arriving mid-slot waits for the next slot.
  AddInts({2});
  clock->SetTime(10'500);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ((*q)->NextBatchId(), BatchId(1));
  clock->SetTime(11'000);
  ASSERT_TRUE(WaitFor([&] { return (*q)->NextBatchId() == BatchId(2); }));
  ASSERT_TRUE((*q)->Stop().ok());
  OffsetSeqLog log(fs::LocalFileSystem(), root_);
  EXPECT_EQ(log.Get(BatchId(0))->metadata->batch_timestamp_ms, 10'000);
  EXPECT_EQ(log.Get(BatchId(1))->metadata->batch_timestamp_ms, 11'000);
}

TEST_F(TriggerExecutionTest, ProcessingTimeOverrunStartsTheNextBatchAtOnce) {
  auto clock = std::make_shared<ManualClock>(0);
  auto sink = std::make_shared<sinks::MemorySink>();
  AddInts({1});
  AddInts({2});
  auto o = Options();
  o.clock = clock;
  o.trigger = *Trigger::ProcessingTime(1000);
  std::vector<SourceSpec> specs;
  specs.push_back(testing::TestSourceSpec(stream_, {.max_files = 1}));
  auto q = MicroBatchExecution::Start(o, std::move(specs), std::make_unique<SlowPlan>(clock, 2500),
                                      FixedSink(sink));
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  // Batch 0 starts at 0 and ends at 2500 (slots 1000 and 2000 missed): batch 1 starts at once, at
  // 2500, not on a replayed slot.
  ASSERT_TRUE(WaitFor([&] { return (*q)->NextBatchId() == BatchId(2); }));
  ASSERT_TRUE((*q)->Stop().ok());
  OffsetSeqLog log(fs::LocalFileSystem(), root_);
  EXPECT_EQ(log.Get(BatchId(0))->metadata->batch_timestamp_ms, 0);
  EXPECT_EQ(log.Get(BatchId(1))->metadata->batch_timestamp_ms, 2500);
}

TEST_F(TriggerExecutionTest, StopDuringIdleWaitReturnsPromptly) {
  auto sink = std::make_shared<sinks::MemorySink>();
  auto q = StartQuery(Options(), FixedSink(sink));
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  EXPECT_EQ((*q)->CurrentStatus().message, "Waiting for data to arrive");
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE((*q)->Stop().ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_TRUE((*q)->AwaitTermination(0).ValueOr(false));
}

}  // namespace
}  // namespace sluice::stream
