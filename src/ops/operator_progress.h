// StateOperatorProgress: one stateful operator's entry of a progress report's
// "stateOperators" (Spark's StateOperatorProgress). Stateful plans produce it per batch
// (plan/incremental_plan.h); the loop in stream/ reports it (stream/progress.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace sluice::ops {

struct StateOperatorProgress {
  std::string operator_name;
  int64_t num_rows_total = 0;
  int64_t num_rows_updated = 0;
  int64_t all_updates_time_ms = 0;
  int64_t num_rows_removed = 0;
  int64_t all_removals_time_ms = 0;
  int64_t commit_time_ms = 0;
  int64_t memory_used_bytes = 0;
  int64_t num_rows_dropped_by_watermark = 0;
  int64_t num_shuffle_partitions = 0;
  int64_t num_state_store_instances = 0;
  std::map<std::string, int64_t> custom_metrics;

  bool operator==(const StateOperatorProgress&) const = default;
};

}  // namespace sluice::ops
