// Planning GroupBy(keys).TransformWithState(...) of a streaming DataFrame (docs/cpp-api.md,
// "Custom state"): the frame under the TransformWithState is compiled for the streaming planner
// (CompileMode::kStreamingPlan: stream i, or the WithWatermark over it, is __stream_<i>) and
// becomes the input SQL of one ops::TransformWithState operator in a plan::StreamingPlan, so the
// operator gets the watermarks, state store, restart checks (plan/operator_check.h: the operator
// is "transformWithStateExec") and progress of every stateful plan.
//
// Refused (InvalidArgument unless said otherwise), with what to change:
// - Complete output mode (Spark: no streaming aggregation), or a TransformWithState output mode
//   that differs from the query's;
// - a stateful operation under it (NotSupported: one stateful operation per query);
// - a GroupBy expression that is not a column of the frame;
// - TimeMode::kEventTime without a WithWatermark;
// - a bad output schema, or an initial state that does not run as a batch frame.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/api_internal.h"
#include "plan/incremental_plan.h"
#include "sinks/sink.h"

namespace sluice::api {

struct TransformWithStatePlan {
  CompiledQuery compiled;  // of the frame under the TransformWithState (its streams, pre_sql)
  std::unique_ptr<plan::IncrementalPlan> plan;
  std::vector<std::string> update_keys;  // the key columns, when the output has them all
};

// `node` is a kTransformWithState node; `conn` is the plan's compile connection.
Result<TransformWithStatePlan> PlanTransformWithState(const std::shared_ptr<SessionState>& session,
                                                      const NodePtr& node, engine::Connection* conn,
                                                      const StreamSchemas& schemas,
                                                      sluice::OutputMode query_mode);

}  // namespace sluice::api
