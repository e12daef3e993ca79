// Clock: the source of "now" for everything that depends on wall-clock time (trigger slots,
// batch timestamps, progress timestamps), behind an interface so tests inject time (DESIGN.md).
//
// Times are milliseconds since the Unix epoch (UTC), as Spark's Clock.getTimeMillis().
//
// Thread safety: every Clock implementation is safe for concurrent use; one thread may wait in
// WaitTillTime while others read NowMs() or (ManualClock) advance the time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

namespace sluice {

class Clock {
 public:
  virtual ~Clock() = default;

  // The current time in milliseconds since the epoch.
  virtual int64_t NowMs() const = 0;

  // Blocks until NowMs() >= target_ms, or until *stop becomes true (checked at least every
  // kStopPollMs; `stop` may be null). Returns the time observed when it returned; the caller
  // compares it with target_ms to learn whether the target was reached.
  virtual int64_t WaitTillTime(int64_t target_ms, const std::atomic<bool>* stop = nullptr) = 0;

  // How often a waiting clock re-checks the stop flag.
  static constexpr int64_t kStopPollMs = 10;
};

// The real clock (std::chrono::system_clock). Stateless.
class SystemClock final : public Clock {
 public:
  int64_t NowMs() const override;
  int64_t WaitTillTime(int64_t target_ms, const std::atomic<bool>* stop = nullptr) override;
};

// The process-wide system clock. Never null.
std::shared_ptr<Clock> DefaultClock();

// A clock that moves only when told to, for tests (Spark's ManualClock).
//
// WaitTillTime either blocks until another thread advances the time far enough (the default),
// or, with auto_advance, jumps the time forward to the target at once, as if the caller had
// slept exactly until then: single-threaded tests of trigger loops use that.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ms = 0, bool auto_advance = false)
      : now_ms_(start_ms), auto_advance_(auto_advance) {}

  int64_t NowMs() const override;
  int64_t WaitTillTime(int64_t target_ms, const std::atomic<bool>* stop = nullptr) override;

  // Moves the time forward by `ms` (>= 0) and wakes waiters.
  void Advance(int64_t ms);
  // Sets the time (may not go backwards: an earlier time is ignored) and wakes waiters.
  void SetTime(int64_t ms);
  // Number of threads currently blocked in WaitTillTime (tests use it to know a waiter arrived).
  int waiters() const;
  // Number of WaitTillTime calls so far.
  int64_t wait_calls() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int64_t now_ms_;          // guarded by mu_
  int waiters_ = 0;         // guarded by mu_
  int64_t wait_calls_ = 0;  // guarded by mu_
  const bool auto_advance_;
};

}  // namespace sluice
