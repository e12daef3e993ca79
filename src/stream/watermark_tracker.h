// WatermarkTracker: the global event-time watermark (docs/streaming-sql.md "Event time and
// watermarks", Spark's WatermarkTracker). Each withWatermark node keeps max(previous, maxEventTime
// - delay) over the batches it saw; after each batch the global value is min (default) or max over
// the nodes, a node that never saw data counting as 0, and the global value only moves forward.
// Only the global value is checkpointed (commits/<N>.nextBatchWatermarkMs); per-node values restart
// empty.
//
// Thread safety: not synchronized; the query thread owns it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "plan/incremental_plan.h"

namespace sluice::stream {

// The plan interface the loop drives lives in the plan layer.
using plan::EventTimeStats;
using plan::IncrementalPlan;
using plan::PlanContext;
using plan::PlanInput;
using plan::PlanOutput;
using plan::SqlPlan;
using plan::WatermarkNode;

class WatermarkTracker {
 public:
  // `policy` is the value of sluice.streaming.multipleWatermarkPolicy: "min" or "max"
  // (case-insensitive); anything else is InvalidArgument.
  static Result<WatermarkTracker> Make(std::vector<WatermarkNode> nodes, std::string_view policy,
                                       int64_t recovered_global_ms);

  // Feeds one batch's per-node stats (size must equal the nodes'; extra or missing entries are
  // ignored / count as no data) and returns the new global watermark.
  int64_t Update(const std::vector<EventTimeStats>& stats);
  int64_t global_ms() const { return global_ms_; }
  bool has_nodes() const { return !nodes_.empty(); }

  // Per node: its watermark (max event time - delay seen so far), nullopt when it never saw
  // data. What a streaming table keeps in memory between REFRESHes of one process (sql.md).
  const std::vector<std::optional<int64_t>>& node_watermarks() const { return node_ms_; }
  // Restores per-node values read with node_watermarks() from an earlier run of the same query
  // in this process. Ignored unless `values` has one entry per node. Does not move the global
  // watermark (the next Update does).
  void RestoreNodeWatermarks(const std::vector<std::optional<int64_t>>& values) {
    if (values.size() == node_ms_.size()) node_ms_ = values;
  }

 private:
  WatermarkTracker(std::vector<WatermarkNode> nodes, bool use_max, int64_t global)
      : nodes_(std::move(nodes)), node_ms_(nodes_.size()), use_max_(use_max), global_ms_(global) {}

  std::vector<WatermarkNode> nodes_;
  std::vector<std::optional<int64_t>> node_ms_;  // nullopt: never saw data in this run
  bool use_max_;
  int64_t global_ms_;
};

}  // namespace sluice::stream
