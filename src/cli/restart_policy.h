// Supervised runs (`sluice run --max-restarts N --restart-backoff D`, docs/operations.md
// "Supervised runs"): which query failures a restart from the checkpoint can fix, and when to
// restart.
//
// ClassifyFailure sorts an error into:
// - kAdditiveSchemaChange: a Delta source's table gained columns (the source's error carries
//   sources::kAdditiveSchemaChangeTag). Restarted at once, not counted against --max-restarts:
//   the new source reads the new schema.
// - kPermanent: a restart would fail the same way, so the run stops with the reason: invalid
//   SQL or options, a checkpoint the query cannot continue from (restart-change rules: a changed
//   source, conf or plan), any other source schema change, a data update in a Delta source, a
//   checkpoint held by another query (its lock), a damaged file (Corruption), something missing
//   (NotFound), something not supported.
// - kTransient: anything else (storage I/O errors, a lost Delta commit race, an injected
//   failure, an internal error): restarted with backoff.
//
// RestartTracker keeps one query's restart budget: consecutive restarts are counted, the delay
// before restart k (1-based) is min(initial * 2^(k-1), max_backoff); a query that ran at least
// `healthy_after_ms` since its last start before failing starts over at k = 1 (its budget is
// back). max_restarts < 0: unlimited.
//
// Thread safety: plain values and pure functions; a RestartTracker is used by one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice::cli {

// "500ms", "10s", "2m", "1h", "1.5s"; a bare number is seconds. >= 0. InvalidArgument otherwise.
Result<int64_t> ParseDurationMs(std::string_view text);

// "500 ms", "10 s", "1 min 30 s", "2 h".
std::string FormatDurationMs(int64_t ms);

enum class FailureKind { kTransient, kAdditiveSchemaChange, kPermanent };

struct FailureClass {
  FailureKind kind = FailureKind::kTransient;
  std::string reason;  // why, for the log: "invalid query or options", "I/O error", ...
};

FailureClass ClassifyFailure(const Status& error);

struct RestartPolicy {
  int64_t max_restarts = 3;            // < 0: unlimited
  int64_t initial_backoff_ms = 10000;  // --restart-backoff
  int64_t max_backoff_ms = 300000;     // the cap (at least initial_backoff_ms)
  int64_t healthy_after_ms = 600000;   // a run this long resets the count
};

struct RestartDecision {
  bool restart = false;
  int64_t delay_ms = 0;
  int64_t restart_number = 0;  // 1-based among consecutive restarts; 0 when not counted
};

class RestartTracker {
 public:
  explicit RestartTracker(RestartPolicy policy) : policy_(policy) {}

  // The query failed at `now_ms` with `kind`, having started at `started_ms`.
  RestartDecision OnFailure(FailureKind kind, int64_t started_ms, int64_t now_ms);

  int64_t consecutive_restarts() const { return consecutive_; }
  int64_t total_restarts() const { return total_; }

 private:
  RestartPolicy policy_;
  int64_t consecutive_ = 0;
  int64_t total_ = 0;
};

}  // namespace sluice::cli
