#include "common/clock.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(ClockTest, SystemClockIsNearWallTime) {
  SystemClock clock;
  int64_t a = clock.NowMs();
  EXPECT_GT(a, 1'600'000'000'000);  // after 2020
  int64_t reached = clock.WaitTillTime(a + 5);
  EXPECT_GE(reached, a + 5);
  EXPECT_GE(clock.NowMs(), a + 5);
}

TEST(ClockTest, SystemClockWaitStopsOnFlag) {
  SystemClock clock;
  std::atomic<bool> stop{true};
  int64_t now = clock.NowMs();
  int64_t reached = clock.WaitTillTime(now + 60'000, &stop);
  EXPECT_LT(reached, now + 60'000);
}

TEST(ClockTest, ManualClockAdvanceAndSetTime) {
  ManualClock clock(100);
  EXPECT_EQ(clock.NowMs(), 100);
  clock.Advance(50);
  EXPECT_EQ(clock.NowMs(), 150);
  clock.SetTime(120);  // never backwards
  EXPECT_EQ(clock.NowMs(), 150);
  clock.SetTime(1000);
  EXPECT_EQ(clock.NowMs(), 1000);
  EXPECT_EQ(clock.WaitTillTime(900), 1000);  // already past: no blocking
}

TEST(ClockTest, ManualClockAutoAdvanceJumps) {
  ManualClock clock(0, /*auto_advance=*/true);
  EXPECT_EQ(clock.WaitTillTime(250), 250);
  EXPECT_EQ(clock.NowMs(), 250);
  EXPECT_EQ(clock.WaitTillTime(100), 250);
  EXPECT_EQ(clock.wait_calls(), 2);
}

TEST(ClockTest, ManualClockBlocksUntilAdvanced) {
  ManualClock clock(0);
  std::atomic<int64_t> woke_at{-1};
  std::thread waiter([&] { woke_at = clock.WaitTillTime(100); });
  while (clock.waiters() == 0) std::this_thread::yield();
  clock.Advance(60);
  EXPECT_EQ(woke_at.load(), -1);  // 60 < 100: still waiting
  clock.Advance(60);
  waiter.join();
  EXPECT_EQ(woke_at.load(), 120);
}

TEST(ClockTest, ManualClockWaitStopsOnFlag) {
  ManualClock clock(0);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> woke_at{-1};
  std::thread waiter([&] { woke_at = clock.WaitTillTime(100, &stop); });
  while (clock.waiters() == 0) std::this_thread::yield();
  stop = true;
  waiter.join();
  EXPECT_EQ(woke_at.load(), 0);
}

}  // namespace
}  // namespace sluice
