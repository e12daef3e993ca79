// FramePlan: the IncrementalPlan that runs a streaming DataFrame (docs/cpp-api.md, "Stateful
// streams"). When the query opens (the sources' schemas are then known) the frame is compiled in
// CompileMode::kStreamingPlan and planned by plan::PlanStreamingQuery, which applies Spark's
// supported-operations rules for the output mode and builds the stateful operator (aggregation,
// deduplication, stream-stream join) or a stateless plan; a GroupBy(...).TransformWithState is
// planned by api/transform_with_state_plan.h instead; its refusals come out of
// MicroBatchExecution::Start, so DataStreamWriter::Start returns them.
//
// Per batch, the rows of a stream under WithWatermark first go through the frame's
// transformations below the WithWatermark (CompiledQuery::Relation::pre_sql), so that the
// planner sees the event-time column as a plain column of stream relation i.
//
// Stateless transformations after the stateful one (Select/SelectExpr/Where/WithColumn/Drop/
// Alias over a streaming Agg, say) run on the rows the operator emits in each batch.
//
// Limits: one stateful operator per query; above it only single-input stateless
// transformations (anything else is refused with NotSupported).
//
// Ownership: the loop owns the plan. Thread safety: driven by the query thread only.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/api_internal.h"
#include "plan/incremental_plan.h"

namespace sluice::api {

// The schemas of the sources as they were created (filled by the source factories, which the
// loop runs before it opens the plan).
using SchemaSlots = std::vector<std::optional<engine::Schema>>;

// What the plan learns when it opens, for the sink.
struct PlanFacts {
  std::vector<std::string> update_keys;  // the planner's UPDATE-mode MERGE keys
  // UPDATE mode of a global aggregation (no grouping key, so no MERGE key): the Delta sink keeps
  // the table at the one row (sinks/delta_sink.h update_single_row).
  bool update_single_row = false;
  bool transformed_after_state = false;  // transformations run after the stateful operator
};

class FramePlan final : public plan::IncrementalPlan {
 public:
  // `facts` is filled at Open (before the loop opens the sink).
  FramePlan(std::shared_ptr<SessionState> session, NodePtr node,
            std::shared_ptr<SchemaSlots> schemas, std::shared_ptr<PlanFacts> facts);

  Status Open(const plan::PlanContext& context) override;
  size_t num_sources() const override { return num_sources_; }
  std::vector<plan::WatermarkNode> watermark_nodes() const override { return watermarks_; }
  Result<plan::PlanOutput> Execute(const plan::PlanInput& input) override;
  bool WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const override;
  std::string Description() const override { return "the streaming DataFrame"; }

 private:
  // Opens inner_ (planned from compiled_) with the static relations made readable.
  Status OpenInner(const plan::PlanContext& context);

  std::shared_ptr<SessionState> session_;
  NodePtr node_;
  std::shared_ptr<SchemaSlots> schemas_;
  std::shared_ptr<PlanFacts> facts_;
  size_t num_sources_;
  std::vector<plan::WatermarkNode> watermarks_;
  CompiledQuery compiled_;
  std::unique_ptr<engine::Connection> conn_;  // runs the pre_sql of watermarked streams
  std::function<Status(engine::Connection&)> outer_prepare_;
  std::unique_ptr<plan::IncrementalPlan> inner_;
  // Transformations after the stateful node, top first; compiled at the first output with
  // columns, over the relation __plan_output.
  std::vector<NodePtr> post_path_;
  std::unique_ptr<engine::Connection> post_conn_;
  std::optional<CompiledQuery> post_;
};

}  // namespace sluice::api
