// Clock: the source of "now" for everything that depends on wall-clock time (trigger slots,
// batch timestamps, progress timestamps), behind an interface so tests inject time
// (docs/architecture.md "Conventions").
//
// Times are milliseconds since the Unix epoch (UTC), as Spark's Clock.getTimeMillis().
//
// Thread safety: every Clock implementation is safe for concurrent use; one thread may wait in
// WaitTillTime while others read NowMs() or (ManualClock) advance the time. Lock discipline:
// ManualClock's one mutex guards its time and counters; no method is called with it held, and
// WaitTillTime releases it while it waits.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "common/mutex.h"

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

// The wall clock in milliseconds since the epoch: std::chrono::system_clock, plus the test skew
// below. Every wall-clock timestamp of Sluice's own (SystemClock, Delta commit times, progress
// and listener events, state file ages, processing-time timers) is read here. Thread-safe.
//
// Test skew (the fault harness's clock fault, test/faults/fault_harness.py): when the
// environment variable SLUICE_TEST_CLOCK_SKEW_FILE names a file, its content, an integer number
// of milliseconds (e.g. "-3600000"), is added; the file is read again when it is 50 ms old in
// the process's monotonic time, so rewriting it makes the clock jump, as an NTP step does. A
// missing or unreadable file counts as 0, text that is not an integer keeps the last value (and
// is reported once on stderr). The libraries' own clocks (DuckDB's now(), librdkafka, RocksDB)
// are not skewed.
int64_t WallClockMs();

// Milliseconds of std::chrono::steady_clock (monotonic; its epoch is arbitrary): for measuring
// durations (progress durationMs, timeouts), never for timestamps. Thread-safe.
int64_t MonotonicMs();

// A clock that moves only when told to, for tests (Spark's ManualClock).
//
// WaitTillTime either blocks until another thread advances the time far enough (the default),
// or, with auto_advance, jumps the time forward to the target at once, as if the caller had
// slept exactly until then: single-threaded tests of trigger loops use that.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ms = 0, bool auto_advance = false)
      : now_ms_(start_ms), auto_advance_(auto_advance) {}

  int64_t NowMs() const override SLUICE_EXCLUDES(mu_);
  int64_t WaitTillTime(int64_t target_ms, const std::atomic<bool>* stop = nullptr) override
      SLUICE_EXCLUDES(mu_);

  // Moves the time forward by `ms` (>= 0) and wakes waiters.
  void Advance(int64_t ms) SLUICE_EXCLUDES(mu_);
  // Sets the time (may not go backwards: an earlier time is ignored) and wakes waiters.
  void SetTime(int64_t ms) SLUICE_EXCLUDES(mu_);
  // Number of threads currently blocked in WaitTillTime (tests use it to know a waiter arrived).
  int waiters() const SLUICE_EXCLUDES(mu_);
  // Number of WaitTillTime calls so far.
  int64_t wait_calls() const SLUICE_EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  CondVar cv_;  // signalled when the time moves
  int64_t now_ms_ SLUICE_GUARDED_BY(mu_);
  int waiters_ SLUICE_GUARDED_BY(mu_) = 0;
  int64_t wait_calls_ SLUICE_GUARDED_BY(mu_) = 0;
  const bool auto_advance_;
};

}  // namespace sluice
