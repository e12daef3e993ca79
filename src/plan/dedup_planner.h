// The deduplication shape planner (owned by the dedup work): SELECT DISTINCT, DISTINCT ON, and
// QUALIFY row_number() OVER (PARTITION BY k ORDER BY t) = 1. docs/streaming-plan.md §2.
#pragma once

#include <optional>

#include "common/result.h"
#include "plan/planner.h"

namespace sluice::plan {

// std::nullopt when the query is not a deduplication shape; an error refuses the query.
// Its phases (dedup_planner.cc): RefuseUnsupportedDedup (the shapes refused), ReadDedupShape
// (keys, ORDER BY and the input query of DISTINCT [ON] / QUALIFY), AddHiddenColumns (keys and
// ORDER BY expressions as hidden input columns), ChooseEventTimeColumn, DedupUpdateKeys (UPDATE
// mode's upsert key), then the spec.
Result<std::optional<StatefulPlanSpec>> PlanDeduplication(const QueryAnalysis& analysis);

}  // namespace sluice::plan
