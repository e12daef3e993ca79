// TransformWithState: Spark's transformWithState (TransformWithStateExec, progress operator name
// "transformWithStateExec") running a user's StatefulProcessor (include/sluice/
// stateful_processor.h) per grouping key, with its state in the operator's state store.
//
// Per batch (state version batch_id is loaded, batch_id + 1 committed, every partition):
// 1. TimeMode::kEventTime with an event-time column: input rows whose event time <= the late
//    watermark are dropped and counted (numRowsDroppedByWatermark); a NULL event time is never
//    late.
// 2. Batch 0 with an initial state: HandleInitialState once per initial-state row, by key.
// 3. The rows are grouped by key; HandleInputRows is called once per key with all of the key's
//    rows in input order. Within a partition keys are handled in order of their first row.
// 4. Expired timers fire, earliest first (ties by key bytes): event-time timers with time <= the
//    eviction watermark (the batch's watermark), processing-time timers with time <= the batch
//    timestamp. A timer is deleted before its HandleExpiredTimer call; timers registered by
//    these calls fire in a later batch.
// 5. Values whose TTL expired (expiry <= batch timestamp) are removed.
// The output is the rows the handlers returned, partition by partition (0, 1, ...), each in call
// order: deterministic for a deterministic processor, so a re-run of a batch gives the same rows.
//
// State: one "default" store per partition (key -> partition: state::PartitionForKey of the
// grouping key's row codec bytes); byte layout in ops/custom_state_vars.h. The state schema
// records the grouping key columns (name, type) as the key and, as the value, one field per
// declared state variable (name, "ValueState<BIGINT>" ...) plus "__timeMode", so a restart with
// other keys, variables or time mode is refused by the schema check, naming the difference.
//
// Progress: numRowsTotal / numRowsUpdated / numRowsRemoved are the store's (entries of
// variables and timers); customMetrics numValueStateVars, numListStateVars, numMapStateVars,
// numRegisteredTimers, numDeletedTimers, numExpiredTimers, numValuesRemovedDueToTTLExpiry and
// the store's figures.
//
// Errors: InvalidArgument naming the column for options that do not match the input, a handler's
// error with the handler and key named, output rows that do not fit the output schema.
// Ownership and threads: see ops/stateful_operator.h; one processor per partition, partitions
// run on up to `parallelism` threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"
#include "ops/stateful_operator.h"
#include "sluice/stateful_processor.h"

namespace sluice::ops {

inline constexpr char kTransformWithStateOperatorName[] = "transformWithStateExec";

struct TransformWithStateOptions {
  // The input columns that form the grouping key (exact names), at least one.
  std::vector<std::string> key_columns;
  StatefulProcessorFactory factory;
  TimeMode time_mode = TimeMode::kNone;
  // The output rows' columns.
  engine::Schema output_schema;
  // The input's watermarked event-time column (TimeMode::kEventTime: late rows are dropped by
  // it); empty when the input has none.
  std::string event_time_column;
  // Initial state rows (Spark's initialState): the key columns (same names and types as the
  // input's) followed by the state columns; used in batch 0 only.
  std::optional<engine::Batch> initial_state;
  // The input's columns when known before the first batch: Open then creates the processors,
  // opens the state and checks it against the checkpoint (so a changed processor is refused
  // when the query starts); otherwise the first Process does.
  std::optional<engine::Schema> input_schema;
  int parallelism = 1;
};

class TransformWithState final : public StatefulOperator {
 public:
  explicit TransformWithState(TransformWithStateOptions options);
  ~TransformWithState() override;

  // InvalidArgument for no key columns, no factory or an empty output schema; with
  // options.input_schema also the errors of the first batch's preparation (columns, Init, the
  // state schema check).
  Status Open(const OperatorContext& context) override;
  // inputs: exactly one batch. Returns the processor's output rows (output_schema).
  Result<engine::Batch> Process(const OperatorBatch& batch,
                                const std::vector<engine::Batch>& inputs) override;
  // kEventTime: next > used (Spark's rule). kProcessingTime: a timer is due by the wall clock.
  bool WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const override;
  StateOperatorProgress Progress() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::ops
