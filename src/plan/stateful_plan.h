// StreamingPlan: the IncrementalPlan of every planned streaming query (docs/streaming-plan.md §3).
//
//   __source_i --view--> __stream_i (+ event-time column) --input SQL per operator input-->
//       ops::StatefulOperator::Process --> __op_output --output SQL--> rows for the sink
//
// A chain of stateful operators (dedup then aggregation, a stream-stream join then an
// aggregation) runs its stages bottom-up: stage k's output rows are registered as the table
// "__stage_<k>" that stage k + 1's input SQL reads; the last stage's output goes to the sink.
// Watermarks propagate as Spark's (semantics doc §5): stage 0 gets the global watermarks (late
// rows: the previous batch's; eviction: this batch's); stage k + 1 gets stage k's plus stage k's
// output_watermark_offset_ms, except that a global watermark of 0 (none yet) stays 0 everywhere.
// Operator ids are Spark's, top-down: the last stage is operator 0 (state/0), the first n - 1;
// progress lists the operators in that order. Open refuses a checkpoint whose operators differ
// (plan/operator_check.h).
//
// A stateless plan has no operator: its query SQL runs over the __stream_i views and its result
// goes to the sink. Per batch the plan also computes each watermark node's event-time stats on
// __stream_i after the WHERE conjuncts that do not use the event-time column
// (docs/sql-reference.md: such a filter runs before the watermark), over all rows, late ones
// included.
//
// Static (non-STREAM) relations are made readable by PlanContext::prepare_connection, called on
// the plan's connection before each batch's SQL. The plan's connection also has the window
// macros (plan/window_sql.h).
//
// Ownership: the loop owns the plan; the plan owns its operator. Thread safety: query thread only.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/relation_names.h"
#include "plan/event_time_stats.h"
#include "plan/incremental_plan.h"
#include "plan/planner.h"
#include "plan/stream_query_parser.h"

namespace sluice::plan {

class StreamingPlan final : public IncrementalPlan {
 public:
  // Stateless: `sql` (over the __stream_<i> views) gives the output.
  static std::unique_ptr<StreamingPlan> Stateless(ParsedStreamingQuery query, std::string sql,
                                                  std::vector<StatsFilters> stats_filters);
  // One stateful operator (spec.op must be set).
  static std::unique_ptr<StreamingPlan> Stateful(ParsedStreamingQuery query, StatefulPlanSpec spec,
                                                 std::vector<StatsFilters> stats_filters);
  // A chain of stateful operators, bottom (first to run) first; each spec.op must be set.
  static std::unique_ptr<StreamingPlan> Chain(ParsedStreamingQuery query,
                                              std::vector<StatefulPlanSpec> stages,
                                              std::vector<StatsFilters> stats_filters);

  // "__stage_<k>": the table holding stage k's output rows for stage k + 1.
  static std::string StageTableName(size_t k) { return engine::StageTableName(k); }
  // The watermark a downstream operator gets from its upstream's `watermark_ms` (see above).
  static int64_t PropagateWatermark(int64_t watermark_ms, int64_t offset_ms) {
    return watermark_ms == 0 ? 0 : watermark_ms + offset_ms;
  }

  Status Open(const PlanContext& context) override;
  size_t num_sources() const override { return query_.streams.size(); }
  std::vector<WatermarkNode> watermark_nodes() const override;
  // Errors carry the batch id and the failing step.
  Result<PlanOutput> Execute(const PlanInput& input) override;
  bool WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const override;
  std::string Description() const override;
  // Stage k's operator (bottom first), or nullptr (no such stage); for tests and tools.
  const ops::StatefulOperator* stage_operator(size_t k) const {
    return k < stages_.size() ? stages_[k].op.get() : nullptr;
  }

  // The SQL that defines view __stream_<i> (over __source_<i>).
  static std::string StreamViewSql(size_t i, const StreamRelation& relation);

 private:
  StreamingPlan() = default;

  ParsedStreamingQuery query_;
  std::string sql_;  // stateless
  // Stateless `SELECT * FROM __stream_0` over a stream view that adds no column (IsSelectStarFrom):
  // the output is the source batch, not a copy.
  bool identity_ = false;
  std::vector<StatsFilters> stats_filters_;  // per stream
  std::vector<StatefulPlanSpec> stages_;     // bottom first; empty: stateless
  std::unique_ptr<engine::Connection> conn_;
  std::function<Status(engine::Connection&)> prepare_;
  std::vector<std::string> stats_sql_;  // per stream; empty without watermark (built lazily)
};

}  // namespace sluice::plan
