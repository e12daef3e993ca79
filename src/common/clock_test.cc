#include "common/clock.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
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

int64_t RealMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void WriteSkew(const std::string& path, const std::string& text) {
  std::ofstream(path + ".tmp") << text;
  std::rename((path + ".tmp").c_str(), path.c_str());
}

// How far WallClockMs is from the real clock once the skew file has been read again.
int64_t ObservedSkewMs() {
  std::this_thread::sleep_for(std::chrono::milliseconds(80));  // past the 50 ms re-read
  return WallClockMs() - RealMs();
}

// The skew is read once per process from the environment: each check runs in a child process
// of its own (a threadsafe death test re-runs this binary), which exits 0 when all held.
void SkewChecks(const std::string& path) {
  setenv("SLUICE_TEST_CLOCK_SKEW_FILE", path.c_str(), 1);
  auto near = [](int64_t got, int64_t want) { return got >= want - 1000 && got <= want + 1000; };
  WriteSkew(path, "3600000\n");
  if (!near(ObservedSkewMs(), 3'600'000)) _exit(1);
  WriteSkew(path, "-5000");  // a jump back, as an NTP step
  if (!near(ObservedSkewMs(), -5000)) _exit(2);
  if (!near(SystemClock().NowMs() - RealMs(), -5000)) _exit(3);
  WriteSkew(path, "soon");  // not milliseconds: the last value stays
  if (!near(ObservedSkewMs(), -5000)) _exit(4);
  std::remove(path.c_str());  // no file: no skew
  if (!near(ObservedSkewMs(), 0)) _exit(5);
  _exit(0);
}

TEST(ClockDeathTest, WallClockFollowsTheTestSkewFile) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  char dir[] = "/tmp/sluice-clock-skew-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/skew-ms";
  // Exit codes 1-5 name the failed check of SkewChecks.
  EXPECT_EXIT(SkewChecks(path), testing::ExitedWithCode(0), "");
  std::remove(path.c_str());
  rmdir(dir);
}

TEST(ClockTest, WallClockWithoutSkewIsTheRealClock) {
  const int64_t before = RealMs();
  const int64_t wall = WallClockMs();
  EXPECT_GE(wall, before);
  EXPECT_LE(wall, RealMs());
}

}  // namespace
}  // namespace sluice
