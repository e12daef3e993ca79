#include "stream/trigger.h"

#include <cctype>

#include "common/interval.h"
#include "common/logging.h"

namespace sluice::stream {

namespace {

Result<int64_t> ParseTriggerInterval(std::string_view text) {
  SLUICE_ASSIGN_OR_RETURN_CTX(Duration d, ParseDuration(text), "trigger interval");
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("month") != std::string::npos || lower.find("year") != std::string::npos) {
    return Status::InvalidArgument("trigger interval '" + std::string(text) +
                                   "': doesn't support month or year interval");
  }
  if (d.micros < 0) {
    return Status::InvalidArgument("trigger interval '" + std::string(text) +
                                   "' cannot be negative");
  }
  return d.millis();
}

}  // namespace

std::string_view TriggerKindName(TriggerKind kind) {
  switch (kind) {
    case TriggerKind::kDefault:
      return "Default";
    case TriggerKind::kProcessingTime:
      return "ProcessingTime";
    case TriggerKind::kAvailableNow:
      return "AvailableNow";
    case TriggerKind::kOnce:
      return "Once";
    case TriggerKind::kContinuous:
      return "Continuous";
  }
  return "?";
}

Result<TriggerKind> TriggerKindFromName(std::string_view name) {
  for (auto k : {TriggerKind::kDefault, TriggerKind::kProcessingTime, TriggerKind::kAvailableNow,
                 TriggerKind::kOnce, TriggerKind::kContinuous}) {
    if (TriggerKindName(k) == name) return k;
  }
  return Status::InvalidArgument("unknown trigger '" + std::string(name) + "'");
}

Result<Trigger> Trigger::ProcessingTime(int64_t interval_ms) {
  if (interval_ms < 0) {
    return Status::InvalidArgument("ProcessingTime trigger interval cannot be negative: " +
                                   std::to_string(interval_ms) + " ms");
  }
  return Trigger{TriggerKind::kProcessingTime, interval_ms};
}

Result<Trigger> Trigger::Continuous(int64_t interval_ms) {
  if (interval_ms < 0) {
    return Status::InvalidArgument(
        "Continuous trigger interval cannot be negative: " + std::to_string(interval_ms) + " ms");
  }
  return Trigger{TriggerKind::kContinuous, interval_ms};
}

Result<Trigger> Trigger::ProcessingTime(std::string_view interval) {
  SLUICE_ASSIGN_OR_RETURN(int64_t ms, ParseTriggerInterval(interval));
  return ProcessingTime(ms);
}

Result<Trigger> Trigger::Continuous(std::string_view interval) {
  SLUICE_ASSIGN_OR_RETURN(int64_t ms, ParseTriggerInterval(interval));
  return Continuous(ms);
}

std::string Trigger::ToString() const {
  switch (kind) {
    case TriggerKind::kProcessingTime:
    case TriggerKind::kContinuous:
      return std::string(TriggerKindName(kind)) + "(" + std::to_string(interval_ms) + " ms)";
    default:
      return std::string(TriggerKindName(kind));
  }
}

int64_t NextBatchTimeMs(int64_t now_ms, int64_t interval_ms) {
  if (interval_ms == 0) return now_ms;
  return now_ms / interval_ms * interval_ms + interval_ms;
}

bool IsFallingBehind(int64_t elapsed_ms, int64_t interval_ms) {
  return interval_ms > 0 && elapsed_ms > interval_ms;
}

ProcessingTimeExecutor::ProcessingTimeExecutor(int64_t interval_ms, std::shared_ptr<Clock> clock,
                                               FallingBehindCallback on_falling_behind)
    : interval_ms_(interval_ms),
      clock_(std::move(clock)),
      on_falling_behind_(std::move(on_falling_behind)) {}

Status ProcessingTimeExecutor::Execute(const BatchRunner& run_batch) {
  while (!stop_requested()) {
    const int64_t trigger_time_ms = clock_->NowMs();
    const int64_t next_trigger_time_ms = NextBatchTimeMs(trigger_time_ms, interval_ms_);
    SLUICE_ASSIGN_OR_RETURN(bool keep_going, run_batch());
    if (interval_ms_ > 0) {
      const int64_t elapsed_ms = clock_->NowMs() - trigger_time_ms;
      if (IsFallingBehind(elapsed_ms, interval_ms_)) {
        SLUICE_LOG(kWarning) << "Current batch is falling behind. The trigger interval is "
                             << interval_ms_ << " milliseconds, but spent " << elapsed_ms
                             << " milliseconds";
        if (on_falling_behind_) on_falling_behind_(elapsed_ms);
      }
      if (!keep_going) return Status::OK();
      clock_->WaitTillTime(next_trigger_time_ms, &stop_);
    } else if (!keep_going) {
      return Status::OK();
    }
  }
  return Status::OK();
}

Status SingleBatchExecutor::Execute(const BatchRunner& run_batch) {
  if (stop_requested()) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN(bool keep_going, run_batch());
  (void)keep_going;
  return Status::OK();
}

Status MultiBatchExecutor::Execute(const BatchRunner& run_batch) {
  while (!stop_requested()) {
    SLUICE_ASSIGN_OR_RETURN(bool keep_going, run_batch());
    if (!keep_going) break;
  }
  return Status::OK();
}

Result<std::unique_ptr<TriggerExecutor>> MakeTriggerExecutor(
    const Trigger& trigger, std::shared_ptr<Clock> clock,
    ProcessingTimeExecutor::FallingBehindCallback on_falling_behind) {
  switch (trigger.kind) {
    case TriggerKind::kDefault:
      return std::unique_ptr<TriggerExecutor>(
          new ProcessingTimeExecutor(0, std::move(clock), std::move(on_falling_behind)));
    case TriggerKind::kProcessingTime:
      if (trigger.interval_ms < 0) {
        return Status::InvalidArgument("ProcessingTime trigger interval cannot be negative");
      }
      return std::unique_ptr<TriggerExecutor>(new ProcessingTimeExecutor(
          trigger.interval_ms, std::move(clock), std::move(on_falling_behind)));
    case TriggerKind::kOnce:
      SLUICE_LOG(kWarning) << "Trigger.Once is deprecated: use Trigger.AvailableNow, which "
                              "processes all available data in rate-limited batches and then "
                              "stops";
      return std::unique_ptr<TriggerExecutor>(new SingleBatchExecutor());
    case TriggerKind::kAvailableNow:
      return std::unique_ptr<TriggerExecutor>(new MultiBatchExecutor());
    case TriggerKind::kContinuous:
      return Status::NotSupported(
          "the Continuous trigger is not supported: Sluice runs micro-batches only (continuous "
          "processing is experimental in Spark and at-least-once); use "
          "Trigger.ProcessingTime('<interval>') for low-latency periodic batches or "
          "Trigger.AvailableNow to process what is available and stop");
  }
  return Status::Internal("unknown trigger kind");
}

}  // namespace sluice::stream
