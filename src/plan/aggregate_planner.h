// The aggregation shape planner (docs/streaming-plan.md §2): GROUP BY plain keys and at most one
// window(ts, size[, slide]) / session_window(ts, gap), aggregates count(*), count, sum, min, max,
// avg, first, last. Produces the input SQL (keys, event time and aggregate arguments per row),
// an ops::StreamingAggregate, and the output SQL (the select list over the operator's output).
// Refuses (InvalidArgument, Spark's words where Spark has them): append mode without a
// watermarked event-time key, update mode with session windows, other aggregate functions,
// DISTINCT aggregates, GROUPING SETS, GROUP BY ALL, ungrouped columns, and in UPDATE mode a
// grouping key that no output column carries (the MERGE key would be incomplete).
#pragma once

#include "common/result.h"
#include "plan/planner.h"

namespace sluice::plan {

Result<StatefulPlanSpec> PlanAggregation(const QueryAnalysis& analysis);

}  // namespace sluice::plan
