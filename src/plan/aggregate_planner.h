// The aggregation shape planner (docs/streaming-plan.md §2): GROUP BY plain keys and at most one
// window(ts, size[, slide]) / session_window(ts, gap), aggregates count(*), count, sum, min, max,
// avg, first, last. Produces the input SQL (keys, event time and aggregate arguments per row),
// an ops::StreamingAggregate, and the output SQL (the select list over the operator's output).
// Refuses (InvalidArgument, Spark's words where Spark has them): append mode without a
// watermarked event-time key, update mode with session windows, other aggregate functions,
// DISTINCT aggregates, GROUPING SETS, GROUP BY ALL, ungrouped columns. In UPDATE mode the
// output columns without aggregates are the MERGE key (update_keys) when they carry every
// grouping key and the window; otherwise the spec appends (update_appends, no key), as Spark.
#pragma once

#include "common/result.h"
#include "plan/planner.h"

namespace sluice::plan {

Result<StatefulPlanSpec> PlanAggregation(const QueryAnalysis& analysis);

// The per-window top-1 plan (ops/streaming_aggregate_top.h, docs/streaming-sql.md "Per-window
// top-1"). `lower` is an APPEND aggregation planned alone as `stage`, and `upper_top` the
// stateless SELECT over its rows (planner.cc PlanStatelessOverAggregation). When that SELECT has
// no WHERE and no OVER window but one QUALIFY conjunct `rank() / dense_rank() OVER (PARTITION BY
// <the window, window.start or window.end> ORDER BY <a grouping key> [ASC | DESC]) = 1` (or
// `<= 1`), and the aggregation has a tumbling / sliding window and no HAVING, the aggregation's
// operator gets the keep_top hint. Otherwise the stage is left as it is (OK either way).
Status HintTopOneOverAggregation(const QueryAnalysis& lower, const Json& upper_top,
                                 StatefulPlanSpec* stage);

}  // namespace sluice::plan
