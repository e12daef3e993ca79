// observe(name, exprs) of a streaming query (Spark's Dataset.observe): the aggregate expressions
// evaluated over one batch's output rows, for progress observedMetrics. The micro-batch loop
// calls it and reports the row; the SQL is built here, not in the loop.
//
// Thread safety: as the Connection's (one thread at a time).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"

namespace sluice::plan {

// One row: `SELECT <exprs> FROM <rows>` (e.g. {"count(*) AS n", "max(id) AS max_id"}), with
// `rows` registered on `conn` for the query only. Errors are the engine's (a bad expression).
Result<engine::Batch> EvaluateObservation(engine::Connection* conn, const engine::Batch& rows,
                                          const std::vector<std::string>& exprs);

}  // namespace sluice::plan
