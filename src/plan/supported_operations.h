// The supported-operations check (Spark's UnsupportedOperationChecker, semantics doc §7) for what
// the shape planners do not check themselves: output modes without aggregation, sorting, limits,
// set operations, OVER windows, stateful shapes below the top level. Messages use Spark's words.
#pragma once

#include "common/status.h"
#include "plan/planner.h"

namespace sluice::plan {

// Checks common to every shape. `stateful` says whether a stateful shape was planned at the top.
Status CheckSupportedOperations(const QueryAnalysis& analysis);

// Complete mode needs an aggregation; ORDER BY needs an aggregation in complete mode.
Status CheckStatelessOutputMode(const QueryAnalysis& analysis);

}  // namespace sluice::plan
