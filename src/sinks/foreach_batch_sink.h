// ForeachBatchSink: hands every micro-batch to a user function (Spark's foreachBatch).
//
// Contract of the function: it gets the batch's rows and its id and returns a Status. A non-OK
// Status fails the batch, and with it the query (no retry here); commits/<N> is then not
// written, so a restart re-runs batch N with the same rows and the same id. The sink is therefore
// at-least-once by itself: exactly-once needs the function to be idempotent per batch id, e.g.
// a Delta write with WriteOptions txn_app_id = <a fixed id for this checkpoint> and txn_version =
// batch id (docs/micro-batch-loop.md, "foreachBatch and exactly-once").
//
// The function runs on the query thread; `data` is valid only during the call.
// Thread safety: driven by one query thread.
#pragma once

#include <functional>
#include <string>

#include "sinks/sink.h"

namespace sluice::sinks {

using ForeachBatchFunction = std::function<Status(const engine::Batch& data, BatchId batch_id)>;

class ForeachBatchSink final : public Sink {
 public:
  explicit ForeachBatchSink(ForeachBatchFunction fn) : fn_(std::move(fn)) {}

  // "ForeachBatchSink", as Spark.
  std::string Description() const override { return "ForeachBatchSink"; }
  // Calls the function once. Its error is returned with context "foreachBatch function failed
  // in batch <N>"; an exception it throws becomes Internal (none escapes); a missing function is
  // InvalidArgument.
  Status AddBatch(BatchId batch_id, const engine::Batch& data, OutputMode mode) override;
  // Unknown (-1 in progress), as Spark: the function may write anything.

 private:
  ForeachBatchFunction fn_;
};

}  // namespace sluice::sinks
