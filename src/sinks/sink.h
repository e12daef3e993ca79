// Sink: a streaming output, the contract between the micro-batch loop and a destination.
//
// Exactly-once contract: AddBatch(N, ...) may be called more than once for the same N — after a
// crash between the sink write and commits/<N>, the loop re-runs batch N with the same input —
// and the destination must then show the batch once. Transactional sinks achieve it by
// recording (query id, N) with the data in one atomic step (Delta: txn{appId, version}); sinks
// that cannot (console, Kafka without transactions) are at-least-once and say so in their docs.
//
// Thread safety: a Sink is driven by one query thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "common/ids.h"
#include "common/result.h"
#include "engine/engine.h"
#include "sluice/query_types.h"

namespace sluice::sinks {

// The output mode is the query's (sluice/query_types.h); sinks::OutputMode names that one type.
using ::sluice::OutputMode;
using ::sluice::OutputModeName;

class Sink {
 public:
  virtual ~Sink() = default;

  // "DeltaSink[/wh/counts]", "ForeachBatchSink", ...: progress sink.description.
  virtual std::string Description() const = 0;

  // Writes the rows of batch `batch_id` under `mode` (see the exactly-once contract above).
  // `data` stays valid only during the call.
  virtual Status AddBatch(BatchId batch_id, const engine::Batch& data, OutputMode mode) = 0;

  // Rows written by the last AddBatch, or nullopt when unknown (progress sink.numOutputRows is
  // then -1).
  virtual std::optional<int64_t> LastNumOutputRows() const { return std::nullopt; }

  // Sink metrics for the progress JSON (sink.metrics).
  virtual std::map<std::string, std::string> Metrics() const { return {}; }
};

}  // namespace sluice::sinks
