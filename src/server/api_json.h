// The JSON of the monitoring server's API (docs/operations.md, "JSON API"):
// - QueriesJson: GET /api/v1/queries, one object per query (id, runId, name, status, trigger,
//   triggerIntervalMs, lastBatchId, lastProgress summary, numInputRowsTotal, failures,
//   fallingBehind, fallingBehindReason, error {message, contexts}).
// - ProgressArrayJson: GET /api/v1/queries/<id>/progress, the StreamingQueryProgress JSONs
//   exactly as stream::ProgressToJson prints them, in an array, oldest first.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/query_store.h"
#include "stream/progress.h"

namespace sluice::server {

nlohmann::ordered_json QueriesJson(const std::vector<QuerySnapshot>& queries);
std::string ProgressArrayJson(const std::vector<stream::StreamingQueryProgress>& progress);

}  // namespace sluice::server
