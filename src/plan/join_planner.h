// The stream-stream join shape planner (owned by the join work): a JOIN of two stream-bearing
// relations. docs/streaming-plan.md §2.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "plan/planner.h"

namespace sluice::plan {

// std::nullopt when the query has no stream-stream join; an error refuses the query.
// Its phases (join_planner.cc): ReadJoinType (the join type, or the refusal), AnalyzeSide (each
// side's relation, columns and watermarks), SplitOnCondition (equi-join keys, one-side filters,
// the rest), ReadJoinWatermarks (state key or state value watermarks), SideInputSql (each side's
// input SQL and operator spec), JoinOutputSql (the SELECT over the operator's output) and
// OutputWatermarkOffset.
Result<std::optional<StatefulPlanSpec>> PlanStreamJoin(const QueryAnalysis& analysis);

// A stream-stream join with a stateful operator above it (plan/planner.cc: "join, then an
// aggregation"): the top SELECT's FROM is the join.
struct StreamJoinBelow {
  // The join, with the query's WHERE; its output rows have one STRUCT column per side named by
  // the side's alias (only the left one for a LEFT SEMI JOIN).
  StatefulPlanSpec join;
  // The top SELECT node rewritten to read the join's output from the table `table`: no WHERE,
  // column references qualified by their side (`x` -> `l.x`, a struct field), `*` -> unnest.
  Json upper;
  // The columns of the join's output that carry a side's watermark (its event-time column, not
  // a window column), as {side alias, column name}: the event-time keys the upper part may use.
  std::vector<std::pair<std::string, std::string>> watermark_columns;
};
// std::nullopt when the top SELECT's FROM is not a stream-stream join; an error refuses it.
Result<std::optional<StreamJoinBelow>> PlanStreamJoinBelow(const QueryAnalysis& analysis,
                                                           const std::string& table);

}  // namespace sluice::plan
