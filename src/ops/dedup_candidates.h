// The candidates of a deduplication batch (ops/deduplicate.h) computed in C++ in one hash pass,
// instead of DuckDB window functions: the rows that are not late and are the first of their key
// in the batch. Used when the choice needs nothing but the key bytes and the event time: the
// batch has no ORDER BY or orders by the event-time column ascending, and the event-time column
// (if any) is a TIMESTAMP / TIMESTAMP WITH TIME ZONE.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"

namespace sluice::ops {

struct DedupCandidateSpec {
  std::vector<size_t> key_indexes;         // input columns forming the key (row codec encoded)
  std::optional<size_t> event_time_index;  // a TIMESTAMP(TZ) column, or none
  bool order_by_event_time = false;        // first row = least event time (ties: input order)
  // Rows whose event time is <= this are late (dropped, counted). Ignored without event time.
  int64_t late_threshold_us = 0;
  // The state time of a candidate: none, its event time (NULL stays NULL), or its event time
  // (NULL as 0) + expiry_delay_us.
  enum class StateTime { kNone, kEventTime, kExpiry } state_time = StateTime::kNone;
  int64_t expiry_delay_us = 0;
};

struct DedupCandidates {
  std::vector<int64_t> rows;                  // input row of each candidate, ascending
  std::vector<std::string> keys;              // its encoded key
  std::vector<std::optional<int64_t>> times;  // its state time (empty for StateTime::kNone)
  int64_t late_rows = 0;
};

// The candidates of `input`, or nullopt when this batch needs the SQL path (an ORDER BY on the
// event time with a NULL event time in the batch, or a state time that overflows BIGINT).
// Errors: the row codec's.
Result<std::optional<DedupCandidates>> ComputeDedupCandidates(const engine::Batch& input,
                                                              const DedupCandidateSpec& spec);

}  // namespace sluice::ops
