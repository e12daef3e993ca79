// The stream-stream join shape planner (owned by the join work): a JOIN of two stream-bearing
// relations. docs/streaming-plan.md §2.
#pragma once

#include <optional>

#include "common/result.h"
#include "plan/planner.h"

namespace sluice::plan {

// std::nullopt when the query has no stream-stream join; an error refuses the query.
Result<std::optional<StatefulPlanSpec>> PlanStreamJoin(const QueryAnalysis& analysis);

}  // namespace sluice::plan
