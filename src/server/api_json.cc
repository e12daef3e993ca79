#include "server/api_json.h"

#include <cmath>

namespace sluice::server {
namespace {

// A rate as the progress JSON has it (one decimal), or null when not finite.
nlohmann::ordered_json Rate(double v) {
  if (!std::isfinite(v)) return nullptr;
  return stream::RoundHalfUpOneDecimal(v);
}

nlohmann::ordered_json Summary(const stream::StreamingQueryProgress& p) {
  nlohmann::ordered_json j;
  j["batchId"] = p.batch_id;
  j["timestamp"] = p.timestamp;
  j["numInputRows"] = p.NumInputRows();
  j["inputRowsPerSecond"] = Rate(p.InputRowsPerSecond());
  j["processedRowsPerSecond"] = Rate(p.ProcessedRowsPerSecond());
  j["batchDurationMs"] = p.batch_duration;
  j["durationMs"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : p.duration_ms) j["durationMs"][k] = v;
  j["eventTime"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : p.event_time) j["eventTime"][k] = v;
  int64_t rows = 0, bytes = 0;
  for (const auto& op : p.state_operators) {
    rows += op.num_rows_total;
    bytes += op.memory_used_bytes;
  }
  j["stateRows"] = rows;
  j["stateMemoryBytes"] = bytes;
  j["numOutputRows"] = p.sink.num_output_rows;
  return j;
}

}  // namespace

nlohmann::ordered_json QueriesJson(const std::vector<QuerySnapshot>& queries) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const QuerySnapshot& q : queries) {
    nlohmann::ordered_json j;
    j["id"] = q.id;
    j["runId"] = q.run_id;
    j["name"] = q.name ? nlohmann::ordered_json(*q.name) : nlohmann::ordered_json(nullptr);
    j["status"] = std::string(QueryStatusName(q.status));
    j["trigger"] = q.trigger;
    j["triggerIntervalMs"] = q.trigger_interval_ms;
    j["lastBatchId"] = q.last_progress ? nlohmann::ordered_json(q.last_progress->batch_id)
                                       : nlohmann::ordered_json(nullptr);
    j["lastProgress"] = q.last_progress ? Summary(*q.last_progress) : nullptr;
    j["numInputRowsTotal"] = q.num_input_rows_total;
    j["numOutputRowsTotal"] = q.num_output_rows_total
                                  ? nlohmann::ordered_json(*q.num_output_rows_total)
                                  : nlohmann::ordered_json(nullptr);
    j["numBatchesTotal"] = q.num_batches_total;
    j["failures"] = q.failures_total;
    j["fallingBehind"] = q.falling_behind;
    j["fallingBehindReason"] = q.falling_behind ? nlohmann::ordered_json(q.falling_behind_reason)
                                                : nlohmann::ordered_json(nullptr);
    if (q.error) {
      j["error"] = {{"message", q.error->message}, {"contexts", q.error->contexts}};
    } else {
      j["error"] = nullptr;
    }
    out.push_back(std::move(j));
  }
  return out;
}

std::string ProgressArrayJson(const std::vector<stream::StreamingQueryProgress>& progress) {
  std::string out = "[";
  for (size_t i = 0; i < progress.size(); ++i) {
    if (i > 0) out += ",\n";
    out += stream::ProgressToJson(progress[i]);
  }
  out += "]";
  return out;
}

}  // namespace sluice::server
