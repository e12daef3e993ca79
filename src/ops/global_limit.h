// GlobalLimit: LIMIT n of a streaming query in append mode, Spark's StreamingGlobalLimitExec
// (progress operator name "globalLimit"): the query writes its first n rows over all batches and
// runs, and none after.
//
// Per batch (state version batch_id is loaded, batch_id + 1 committed): the count of rows written
// by the batches before is read from state (0 when absent); the first min(n - count, rows) rows of
// the input, in input order, are the output; the new count is put when it changed
// (numRowsUpdated 1). numRowsTotal is 1 once a row was written (the one count), else 0. Nothing is
// late and nothing is evicted (no watermark use, no no-data batches).
//
// State: one partition (Spark plans the limit over a single partition), one entry: key = the row
// codec encoding of zero columns (the key schema has no fields), value = the row codec encoding
// of BIGINT `count`. The state schema is checked on restart, so a checkpoint of another operator
// is refused; a different n on restart is allowed, as in Spark (the count is compared with it).
//
// Errors: InvalidArgument from the constructor's options checked at Open (n < 0), the state
// layer's errors with the batch id, Corruption for a stored count that does not decode.
// Ownership and threads: see ops/stateful_operator.h (query thread only).
#pragma once

#include <cstdint>
#include <memory>

#include "common/result.h"
#include "ops/operator_state.h"
#include "ops/stateful_operator.h"

namespace sluice::ops {

inline constexpr char kGlobalLimitOperatorName[] = "globalLimit";

struct GlobalLimitOptions {
  int64_t limit = 0;  // n of LIMIT n, >= 0
};

class GlobalLimit final : public StatefulOperator {
 public:
  explicit GlobalLimit(GlobalLimitOptions options) : options_(options) {}

  // InvalidArgument for a negative limit; opens the one state partition.
  Status Open(const OperatorContext& context) override;
  // inputs: exactly one batch. Returns its first rows up to the limit left (all its columns).
  Result<engine::Batch> Process(const OperatorBatch& batch,
                                const std::vector<engine::Batch>& inputs) override;
  // Always false: the limit does not depend on the watermark.
  bool WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const override;
  StateOperatorProgress Progress() const override { return progress_; }

 private:
  GlobalLimitOptions options_;
  std::unique_ptr<OperatorState> state_;
  StateOperatorProgress progress_;
};

}  // namespace sluice::ops
