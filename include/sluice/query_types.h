// The value types of a streaming query that the C++ API and the engine share: the output mode,
// the query's status, its progress as a program reads it, and the listener events. Defined once,
// here, and used inside as they are (as Status and Result are), so that no layer keeps a mirror
// of them with converters. (The engine's own progress record, with every operator's and source's
// figures, is what StreamingQueryProgress::Json() prints.)
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace sluice {

// Spark's output modes.
enum class OutputMode {
  kAppend,    // only rows added since the last batch, never changed afterwards (the default)
  kUpdate,    // rows changed since the last batch (upserts by key)
  kComplete,  // the whole result, every batch
};

// "Append", "Update", "Complete", as Spark spells them in progress and errors.
constexpr const char* OutputModeName(OutputMode mode) {
  switch (mode) {
    case OutputMode::kAppend:
      return "Append";
    case OutputMode::kUpdate:
      return "Update";
    case OutputMode::kComplete:
      return "Complete";
  }
  return "Unknown";
}

// What a query is doing now (Spark's StreamingQueryStatus): StreamingQuery::CurrentStatus().
struct StreamingQueryStatus {
  // "Initializing", "Waiting for data to arrive", "Processing new data", "Stopped".
  std::string message;
  bool is_data_available = false;
  bool is_trigger_active = false;
};

// The progress of one micro-batch (Spark's StreamingQueryProgress): the figures a program reads
// most, and Json(), the whole progress as one line of Spark's JSON (docs/formats/progress.md),
// with every operator's, source's and sink's figures.
struct StreamingQueryProgress {
  std::string id;                   // the query id
  std::string run_id;               // the id of this run
  std::optional<std::string> name;  // QueryName, if given
  std::string timestamp;            // the trigger's start, "2024-01-02T03:04:05.678Z"
  int64_t batch_id = 0;
  int64_t batch_duration_ms = 0;
  int64_t num_input_rows = 0;                     // summed over the sources
  double input_rows_per_second = 0;               // summed over the sources
  double processed_rows_per_second = 0;           // summed over the sources
  int64_t num_output_rows = -1;                   // the sink's; -1 when it does not say
  std::map<std::string, int64_t> duration_ms;     // "addBatch", "triggerExecution", ...
  std::map<std::string, std::string> event_time;  // "watermark", "min", "max", "avg"

  const std::string& Json() const { return json_; }

  StreamingQueryProgress() = default;
  // For the engine, which made the JSON from the same record.
  explicit StreamingQueryProgress(std::string json) : json_(std::move(json)) {}

 private:
  std::string json_;
};

// Listener events (Spark's StreamingQueryListener events): StreamingQueryListener's arguments.
struct QueryStartedEvent {
  std::string id, run_id;
  std::optional<std::string> name;
  std::string timestamp;  // "2024-01-02T03:04:05.678Z"
};
struct QueryProgressEvent {
  StreamingQueryProgress progress;
};
struct QueryIdleEvent {
  std::string id, run_id;
  std::string timestamp;
};
struct QueryTerminatedEvent {
  std::string id, run_id;
  std::optional<std::string> exception;  // the error message; nullopt after a clean end
};

}  // namespace sluice
