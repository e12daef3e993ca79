// Triggers: when the micro-batch loop runs a batch (docs/micro-batch-loop.md "Triggers").
//
// - Default: the next batch as soon as the previous one ends (ProcessingTime(0)); an idle
//   trigger sleeps the polling delay before polling again (the loop's job).
// - ProcessingTime(i): batches start on the slots floor(start/i)*i + i; an overrun logs
//   "Current batch is falling behind" and starts the next batch immediately (missed slots are
//   neither replayed nor coalesced).
// - AvailableNow: batches until the snapshot of the latest offsets taken at start is processed.
// - Once (deprecated): exactly one batch.
// - Continuous(i): refused by the micro-batch engine with advice.
//
// TriggerExecutor runs the loop's per-trigger callback according to the trigger, with the Clock
// injected so tests control time.
//
// Thread safety: Trigger is a value. A TriggerExecutor runs on one thread (the query's);
// RequestStop may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"

namespace sluice::stream {

enum class TriggerKind { kDefault, kProcessingTime, kAvailableNow, kOnce, kContinuous };

std::string_view TriggerKindName(TriggerKind kind);  // "Default", "ProcessingTime", ...
// The kind TriggerKindName gives `name`; InvalidArgument "unknown trigger '<name>'" otherwise.
Result<TriggerKind> TriggerKindFromName(std::string_view name);

// The polling delay of an idle default/processing-time trigger (spark pollingDelay, 10 ms).
inline constexpr int64_t kPollingDelayMs = 10;

struct Trigger {
  TriggerKind kind = TriggerKind::kDefault;
  // kProcessingTime and kContinuous: the interval in ms (>= 0). 0 for the others.
  int64_t interval_ms = 0;

  static Trigger Default() { return {TriggerKind::kDefault, 0}; }
  static Trigger AvailableNow() { return {TriggerKind::kAvailableNow, 0}; }
  static Trigger Once() { return {TriggerKind::kOnce, 0}; }
  // InvalidArgument for a negative interval.
  static Result<Trigger> ProcessingTime(int64_t interval_ms);
  static Result<Trigger> Continuous(int64_t interval_ms);
  // "10 seconds", "500 ms", "INTERVAL 1 MINUTE" (common/interval.h). InvalidArgument for a bad or
  // negative interval, or one with months or years (Spark: "Doesn't support month or year
  // interval").
  static Result<Trigger> ProcessingTime(std::string_view interval);
  static Result<Trigger> Continuous(std::string_view interval);

  // "Default", "ProcessingTime(1000 ms)", "AvailableNow", "Once", "Continuous(1000 ms)".
  std::string ToString() const;
  bool operator==(const Trigger&) const = default;
};

// The next slot of a ProcessingTime(interval_ms) trigger whose batch starts at now_ms:
// floor(now/i)*i + i, or now when i == 0 (Spark's ProcessingTimeExecutor.nextBatchTime).
// Requires now_ms >= 0 and interval_ms >= 0.
int64_t NextBatchTimeMs(int64_t now_ms, int64_t interval_ms);

// Whether a batch that took elapsed_ms falls behind an interval: elapsed > interval > 0.
bool IsFallingBehind(int64_t elapsed_ms, int64_t interval_ms);

// Runs a trigger's batches. `run_batch` runs one trigger (constructs and runs a batch or does
// nothing when there is no data) and returns whether the query should continue; an error stops
// the executor and is returned.
class TriggerExecutor {
 public:
  using BatchRunner = std::function<Result<bool>()>;
  virtual ~TriggerExecutor() = default;
  virtual Status Execute(const BatchRunner& run_batch) = 0;
  // Makes Execute return at the next batch boundary (a wait in progress ends early).
  void RequestStop() { stop_.store(true); }
  bool stop_requested() const { return stop_.load(); }

 protected:
  std::atomic<bool> stop_{false};
};

// Spark's ProcessingTimeExecutor (also the default trigger, with interval 0):
//   loop: t = now; next = NextBatchTimeMs(t, i); continue = run_batch();
//         if i > 0: elapsed = now - t; if elapsed > i: falling behind (warning + callback);
//                   stop if !continue; wait until next
//         else: stop if !continue
class ProcessingTimeExecutor final : public TriggerExecutor {
 public:
  // Called with the elapsed time of a batch that fell behind (tests observe it; the warning is
  // logged regardless).
  using FallingBehindCallback = std::function<void(int64_t elapsed_ms)>;

  // interval_ms >= 0 (a Trigger built by the factories above guarantees it).
  ProcessingTimeExecutor(int64_t interval_ms, std::shared_ptr<Clock> clock,
                         FallingBehindCallback on_falling_behind = nullptr);
  Status Execute(const BatchRunner& run_batch) override;
  int64_t interval_ms() const { return interval_ms_; }

 private:
  const int64_t interval_ms_;
  std::shared_ptr<Clock> clock_;
  FallingBehindCallback on_falling_behind_;
};

// Once: run_batch exactly one time.
class SingleBatchExecutor final : public TriggerExecutor {
 public:
  Status Execute(const BatchRunner& run_batch) override;
};

// AvailableNow: run_batch until it returns false (the loop returns false on the first trigger
// that constructs no batch once the snapshot is processed).
class MultiBatchExecutor final : public TriggerExecutor {
 public:
  Status Execute(const BatchRunner& run_batch) override;
};

// The executor for a micro-batch query's trigger. Once logs a deprecation warning naming
// AvailableNow. Continuous is refused: NotSupported with advice to use ProcessingTime or
// AvailableNow. InvalidArgument for a negative interval.
Result<std::unique_ptr<TriggerExecutor>> MakeTriggerExecutor(
    const Trigger& trigger, std::shared_ptr<Clock> clock,
    ProcessingTimeExecutor::FallingBehindCallback on_falling_behind = nullptr);

}  // namespace sluice::stream
