#include "common/mutex.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace sluice {
namespace {

// A counter guarded the way the annotated classes guard their state.
class Counter {
 public:
  void Add() SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    ++n_;
    cv_.SignalAll();
  }
  // Waits until the count reaches `n`.
  void AwaitAtLeast(int n) SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (n_ < n) cv_.Wait(&mu_);
  }
  // Waits at most timeout_ms; the count then.
  int AwaitAtLeastFor(int n, int64_t timeout_ms) SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (n_ < n && cv_.WaitUntil(&mu_, deadline)) {
    }
    return n_;
  }
  int AddUnlockedInBetween() SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    ++n_;
    lock.Unlock();
    Add();  // would deadlock if the lock were still held
    lock.Lock();
    return n_;
  }
  int value() const SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return n_;
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  int n_ SLUICE_GUARDED_BY(mu_) = 0;
};

TEST(MutexTest, ThreadsAddUnderTheLock) {
  Counter c;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&c] {
      for (int i = 0; i < 1000; ++i) c.Add();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.value(), 4000);
}

TEST(MutexTest, AWaiterWakesOnASignal) {
  Counter c;
  std::thread waiter([&c] { c.AwaitAtLeast(3); });
  for (int i = 0; i < 3; ++i) c.Add();
  waiter.join();  // returns only once the count reached 3
  EXPECT_EQ(c.value(), 3);
}

TEST(MutexTest, ATimedWaitThatIsAlreadySatisfiedReturnsAtOnce) {
  Counter c;
  c.Add();
  EXPECT_EQ(c.AwaitAtLeastFor(1, 60'000), 1);
  // A deadline in the past: the wait ends without the condition.
  EXPECT_EQ(c.AwaitAtLeastFor(5, 0), 1);
}

TEST(MutexTest, AScopedLockReleasesAndRetakes) {
  Counter c;
  EXPECT_EQ(c.AddUnlockedInBetween(), 2);
}

}  // namespace
}  // namespace sluice
