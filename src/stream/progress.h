// StreamingQueryProgress: what the engine reports after every trigger (Spark's progress.scala),
// and its JSON, byte for byte as Spark serializes it (docs/formats/progress.md,
// docs/micro-batch-loop.md "Progress and listeners"):
// - keys in Spark's order; maps (durationMs, eventTime, metrics, customMetrics, observedMetrics)
//   sorted by key and omitted entirely when empty; "stateOperators" and "sources" always present;
// - doubles rounded to one decimal, HALF_UP (on the shortest decimal form, as
//   BigDecimal(d).setScale(1, HALF_UP)), printed as "12.3"; NaN and +-Inf omitted;
// - "name" is null when unset; offsets are embedded as JSON (null when absent; text that is not
//   JSON is embedded as a JSON string);
// - timestamps "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'" in UTC (time_format.h).
// The JSON is compact (Spark's `json`), one line. ParseProgressJson reads it back, so that
// streaming_progress() rows survive restarts.
//
// Thread safety: plain value types; functions are pure.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "ops/operator_progress.h"

namespace sluice::stream {

// Operator names as Spark reports them.
inline constexpr std::string_view kOpStateStoreSave = "stateStoreSave";
inline constexpr std::string_view kOpDedupe = "dedupe";
inline constexpr std::string_view kOpDedupeWithinWatermark = "dedupeWithinWatermark";
inline constexpr std::string_view kOpSymmetricHashJoin = "symmetricHashJoin";
inline constexpr std::string_view kOpSessionWindow = "sessionWindowStateStoreSaveExec";
inline constexpr std::string_view kOpTransformWithState = "transformWithStateExec";

// durationMs keys.
inline constexpr std::string_view kDurationAddBatch = "addBatch";
inline constexpr std::string_view kDurationCommitOffsets = "commitOffsets";
inline constexpr std::string_view kDurationGetBatch = "getBatch";
inline constexpr std::string_view kDurationLatestOffset = "latestOffset";
inline constexpr std::string_view kDurationQueryPlanning = "queryPlanning";
inline constexpr std::string_view kDurationTriggerExecution = "triggerExecution";
inline constexpr std::string_view kDurationWalCommit = "walCommit";

// Defined in the ops layer, whose operators produce it (ops/operator_progress.h).
using ops::StateOperatorProgress;

struct SourceProgress {
  std::string description;
  // Offsets as JSON text; nullopt prints null.
  std::optional<std::string> start_offset;
  std::optional<std::string> end_offset;
  std::optional<std::string> latest_offset;
  int64_t num_input_rows = 0;
  double input_rows_per_second = 0;  // NaN/Inf are omitted from the JSON
  double processed_rows_per_second = 0;
  std::map<std::string, std::string> metrics;

  // Rates compare equal when both are NaN, so that parsed progress compares equal.
  bool operator==(const SourceProgress& other) const;
};

struct SinkProgress {
  std::string description;
  int64_t num_output_rows = -1;  // -1: unknown
  std::map<std::string, std::string> metrics;

  bool operator==(const SinkProgress&) const = default;
};

struct StreamingQueryProgress {
  std::string id;                   // query id (UUID)
  std::string run_id;               // run id (UUID)
  std::optional<std::string> name;  // query name; null when unset
  std::string timestamp;            // trigger start, FormatUtcTimestampMs
  int64_t batch_id = 0;
  int64_t batch_duration = 0;  // ms
  std::map<std::string, int64_t> duration_ms;
  // "avg", "max", "min", "watermark" -> timestamp text (see §9 for which are present).
  std::map<std::string, std::string> event_time;
  std::vector<StateOperatorProgress> state_operators;
  std::vector<SourceProgress> sources;
  SinkProgress sink;
  // observe() name -> the row as a JSON object {"column": value, ...}.
  std::map<std::string, nlohmann::ordered_json> observed_metrics;

  // Sums over the sources, as Spark derives them.
  int64_t NumInputRows() const;
  double InputRowsPerSecond() const;
  double ProcessedRowsPerSecond() const;

  bool operator==(const StreamingQueryProgress&) const = default;
};

// BigDecimal(value).setScale(1, HALF_UP) as a double: 0.05 -> 0.1, 2.25 -> 2.3, -0.25 -> -0.3,
// 10.04 -> 10.0. NaN and infinities are returned unchanged. The result is never -0.0.
double RoundHalfUpOneDecimal(double value);

// The compact JSON described above.
std::string ProgressToJson(const StreamingQueryProgress& progress);
nlohmann::ordered_json ProgressToJsonValue(const StreamingQueryProgress& progress);

// Parses JSON produced by ProgressToJson (or Spark). Missing maps read as empty, missing rates as
// NaN, null name as unset; derived fields (numInputRows, rates at the top level) are ignored
// since they are sums over the sources. An offset that is a JSON string is read back as its
// content when that content is not itself JSON (it was non-JSON offset text; a source whose
// offsets are JSON strings with non-JSON content cannot be told apart, as in Spark), otherwise
// as the JSON text. Corruption naming the field on a type mismatch or bad JSON.
Result<StreamingQueryProgress> ParseProgressJson(std::string_view json);

}  // namespace sluice::stream
