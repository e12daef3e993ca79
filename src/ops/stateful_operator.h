// StatefulOperator: the interface of the stateful streaming operators (aggregation, session
// windows, deduplication, stream-stream joins) that a stateful plan (plan/stateful_plan.h) runs
// between its input SQL and its output SQL. docs/streaming-plan.md §4.
//
// Contract:
// - Open is called once, before the first batch, with the restored configuration.
// - Process runs batch `batch.batch_id`: it loads state version batch_id, applies the inputs,
//   drops late rows (event time <= late_watermark_ms, counted), evicts / emits by
//   eviction_watermark_ms per output mode, and commits state version batch_id + 1. It must be
//   deterministic for a re-run of the same batch (the loop re-runs a batch after a crash).
// - Progress() describes the last Process (Spark's StateOperatorProgress).
// Ownership: the plan owns its operator. Thread safety: driven by the query thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/result.h"
#include "engine/engine.h"
#include "fs/file_system.h"
#include "ops/operator_progress.h"
#include "sinks/sink.h"

namespace sluice::ops {

// What an operator gets once, at Open.
struct OperatorContext {
  engine::Engine* engine = nullptr;    // for SQL over batches inside the operator; outlives it
  std::shared_ptr<fs::FileSystem> fs;  // the query's file system (state files, crash points)
  std::string checkpoint_root;         // state at <root>/state/<operator_id>/<partition>
  int64_t operator_id = 0;             // 0, 1, ... in plan order
  int32_t num_partitions = 200;        // sluice.sql.shuffle.partitions as restored
  sluice::OutputMode output_mode = sluice::OutputMode::kAppend;
  // The persisted conf the run uses (sluice.streaming.stateStore.providerClass: "rocksdb" or
  // anything naming the memory/HDFS provider).
  std::map<std::string, std::string> conf;
};

// What an operator gets per batch.
struct OperatorBatch {
  BatchId batch_id{0};                // loads state version batch_id, commits batch_id + 1
  int64_t late_watermark_ms = 0;      // rows with event time <= this are late (dropped, counted)
  int64_t eviction_watermark_ms = 0;  // state older than this is evicted / emitted
  int64_t batch_timestamp_ms = 0;     // current_timestamp() of the batch
  bool no_data_batch = false;
};

// A watermark (ms) in microseconds, saturating: operators compare event times in us with
// watermark ms * 1000 (Spark's inclusive rule), and a watermark never overflows.
inline int64_t WatermarkMicros(int64_t ms) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 1000;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min() / 1000;
  return std::clamp(ms, kMin, kMax) * 1000;
}

class StatefulOperator {
 public:
  virtual ~StatefulOperator() = default;

  virtual Status Open(const OperatorContext& context) = 0;
  // inputs: one batch (aggregate, dedup) or two (join: left, right). Returns the operator's
  // output rows (documented per operator). Deterministic for a re-run.
  virtual Result<engine::Batch> Process(const OperatorBatch& batch,
                                        const std::vector<engine::Batch>& inputs) = 0;
  // Spark's shouldRunAnotherBatch: after a batch that evicted with `used_watermark_ms`, whether a
  // no-data batch should run now that the watermark is `next_watermark_ms`.
  virtual bool WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const = 0;
  // Of the last Process (operator_name is Spark's: "stateStoreSave", "dedupe", ...).
  virtual StateOperatorProgress Progress() const = 0;
};

}  // namespace sluice::ops
