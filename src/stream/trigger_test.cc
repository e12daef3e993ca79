#include "stream/trigger.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace sluice::stream {
namespace {

TEST(TriggerTest, NextBatchTimeSlots) {
  EXPECT_EQ(NextBatchTimeMs(0, 1000), 1000);
  EXPECT_EQ(NextBatchTimeMs(1, 1000), 1000);
  EXPECT_EQ(NextBatchTimeMs(999, 1000), 1000);
  EXPECT_EQ(NextBatchTimeMs(1000, 1000), 2000);  // on a slot: the next one
  EXPECT_EQ(NextBatchTimeMs(1500, 1000), 2000);
  EXPECT_EQ(NextBatchTimeMs(1700000000123, 60000), 1700000040000);
  EXPECT_EQ(NextBatchTimeMs(1234, 0), 1234);  // interval 0: back to back
}

TEST(TriggerTest, FallingBehindIsStrictlyLonger) {
  EXPECT_TRUE(IsFallingBehind(1001, 1000));
  EXPECT_FALSE(IsFallingBehind(1000, 1000));
  EXPECT_FALSE(IsFallingBehind(5, 0));
}

TEST(TriggerTest, Factories) {
  EXPECT_EQ(Trigger::Default().ToString(), "Default");
  EXPECT_EQ(Trigger::Once().ToString(), "Once");
  EXPECT_EQ(Trigger::AvailableNow().ToString(), "AvailableNow");
  auto pt = Trigger::ProcessingTime("10 seconds");
  ASSERT_TRUE(pt.ok()) << pt.status().ToString();
  EXPECT_EQ(pt->kind, TriggerKind::kProcessingTime);
  EXPECT_EQ(pt->interval_ms, 10000);
  EXPECT_EQ(pt->ToString(), "ProcessingTime(10000 ms)");
  EXPECT_EQ(Trigger::ProcessingTime("INTERVAL 1 MINUTE")->interval_ms, 60000);
  EXPECT_EQ(Trigger::ProcessingTime(int64_t{0})->interval_ms, 0);
  EXPECT_EQ(Trigger::Continuous("1 second")->ToString(), "Continuous(1000 ms)");
  EXPECT_TRUE(Trigger::ProcessingTime(int64_t{-1}).status().IsInvalidArgument());
  EXPECT_TRUE(Trigger::ProcessingTime("-5 seconds").status().IsInvalidArgument());
  EXPECT_TRUE(Trigger::ProcessingTime("soon").status().IsInvalidArgument());
  auto month = Trigger::ProcessingTime("1 month");
  ASSERT_FALSE(month.ok());
  EXPECT_NE(month.status().message().find("month or year"), std::string::npos);
}

// A batch runner that records the time each batch starts and advances the manual clock by the
// batch's duration.
struct ScriptedBatches {
  ManualClock* clock;
  std::vector<int64_t> durations;
  std::vector<int64_t> starts;

  Result<bool> operator()() {
    starts.push_back(clock->NowMs());
    clock->Advance(durations[starts.size() - 1]);
    return starts.size() < durations.size();
  }
};

TEST(TriggerTest, ProcessingTimeRunsOnSlotsAndNeverReplaysMissedOnes) {
  auto clock = std::make_shared<ManualClock>(1500, /*auto_advance=*/true);
  std::vector<int64_t> behind;
  ProcessingTimeExecutor exec(1000, clock, [&](int64_t elapsed) { behind.push_back(elapsed); });
  ScriptedBatches batches{clock.get(), {100, 2500, 100, 1000}, {}};
  ASSERT_TRUE(exec.Execute(std::ref(batches)).ok());
  // 1500: slot 2000. 2000 (+2500 = 4500, behind): slot 3000 already passed, so the next batch
  // starts at once at 4500 (slots 3000 and 4000 are not replayed): slot 5000. 5000: exactly the
  // interval is not behind.
  EXPECT_EQ(batches.starts, (std::vector<int64_t>{1500, 2000, 4500, 5000}));
  EXPECT_EQ(behind, (std::vector<int64_t>{2500}));
  // It waited after batches 1..3 but not after the last one (the query ended).
  EXPECT_EQ(clock->wait_calls(), 3);
  EXPECT_EQ(clock->NowMs(), 6000);
}

TEST(TriggerTest, DefaultTriggerRunsBackToBack) {
  auto clock = std::make_shared<ManualClock>(0, /*auto_advance=*/true);
  int behind = 0;
  auto exec = MakeTriggerExecutor(Trigger::Default(), clock, [&](int64_t) { ++behind; });
  ASSERT_TRUE(exec.ok());
  ScriptedBatches batches{clock.get(), {5000, 7, 0}, {}};
  ASSERT_TRUE((*exec)->Execute(std::ref(batches)).ok());
  EXPECT_EQ(batches.starts, (std::vector<int64_t>{0, 5000, 5007}));
  EXPECT_EQ(behind, 0);
  EXPECT_EQ(clock->wait_calls(), 0);
}

TEST(TriggerTest, BatchErrorStopsTheExecutor) {
  auto clock = std::make_shared<ManualClock>(0, true);
  ProcessingTimeExecutor exec(100, clock);
  int calls = 0;
  Status st = exec.Execute([&]() -> Result<bool> {
    if (++calls == 2) return Status::IOError("disk gone");
    return true;
  });
  EXPECT_TRUE(st.IsIOError());
  EXPECT_EQ(calls, 2);
}

TEST(TriggerTest, StopRequestEndsAWaitEarly) {
  auto clock = std::make_shared<ManualClock>(0);  // blocking: nobody advances it
  ProcessingTimeExecutor exec(60000, clock);
  int calls = 0;
  std::thread runner([&] {
    Status st = exec.Execute([&]() -> Result<bool> {
      ++calls;
      return true;
    });
    EXPECT_TRUE(st.ok());
  });
  while (clock->waiters() == 0) std::this_thread::yield();
  exec.RequestStop();
  runner.join();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(clock->NowMs(), 0);
}

TEST(TriggerTest, OnceRunsExactlyOneBatch) {
  auto exec = MakeTriggerExecutor(Trigger::Once(), DefaultClock());
  ASSERT_TRUE(exec.ok());
  int calls = 0;
  ASSERT_TRUE((*exec)
                  ->Execute([&]() -> Result<bool> {
                    ++calls;
                    return true;  // even if the batch would like to continue
                  })
                  .ok());
  EXPECT_EQ(calls, 1);
}

TEST(TriggerTest, AvailableNowRunsUntilNoBatchIsConstructed) {
  auto exec = MakeTriggerExecutor(Trigger::AvailableNow(), DefaultClock());
  ASSERT_TRUE(exec.ok());
  int calls = 0;
  ASSERT_TRUE((*exec)->Execute([&]() -> Result<bool> { return ++calls < 4; }).ok());
  EXPECT_EQ(calls, 4);
}

TEST(TriggerTest, ContinuousIsRefusedWithAdvice) {
  auto exec = MakeTriggerExecutor(*Trigger::Continuous(int64_t{1000}), DefaultClock());
  ASSERT_FALSE(exec.ok());
  EXPECT_TRUE(exec.status().IsNotSupported());
  EXPECT_NE(exec.status().message().find("Continuous trigger is not supported"), std::string::npos);
  EXPECT_NE(exec.status().message().find("AvailableNow"), std::string::npos);
  EXPECT_NE(exec.status().message().find("ProcessingTime"), std::string::npos);
}

}  // namespace
}  // namespace sluice::stream
