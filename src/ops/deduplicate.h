// Streaming deduplication operators (docs/streaming-plan.md §4, docs/sql-reference.md "Streams"):
//
//   Deduplicate                  Spark's dropDuplicates(keys)            progress name "dedupe"
//   DeduplicateWithinWatermark   Spark's dropDuplicatesWithinWatermark   "dedupeWithinWatermark"
//
// Both keep the first row to arrive for each key and drop every later row with that key while the
// key is in state. Within one batch the first row is the first in `order_by` order (ties, and an
// empty `order_by`, by input order). The output is the surviving rows of the input, with the
// input's columns, in input order.
//
// Per batch (state version batch_id is loaded, batch_id + 1 committed):
// 1. When the input carries the event-time column, rows whose event time is <= the late watermark
//    are dropped and counted (numRowsDroppedByWatermark). A NULL event time is never late.
// 2. The first row of each key that is not in state is emitted and its key put into state
//    (numRowsUpdated); other rows are dropped (customMetrics.numDroppedDuplicateRows).
// 3. Eviction by the eviction watermark (numRowsRemoved):
//    - Deduplicate: only when the event-time column is one of the keys; a key is removed when its
//      event time <= the eviction watermark. Otherwise state is kept forever (Spark's rule).
//    - DeduplicateWithinWatermark: a key is removed once its expiry (event time of the row that
//      put it + the watermark delay) <= the eviction watermark.
// Event times compare in microseconds against watermark ms * 1000 (Spark's inclusive rule); for a
// STRUCT event-time column (a window) its "end" field is the event time.
//
// State: key = the row codec encoding of the key columns (engine/row_codec.h), partitioned with
// state::PartitionForKey over OperatorContext::num_partitions. Value = the row codec encoding of
// zero columns (Deduplicate without eviction), of BIGINT eventTimeMicros (Deduplicate with the
// event time among the keys), or of BIGINT expiresAtMicros (DeduplicateWithinWatermark). The
// state schema (key columns' names and types, value fields) is checked on restart.
//
// Memory (docs/streaming-plan.md §4): each partition's keys are mirrored in memory
// (ops/dedup_state_mirror.h: a hash set with an index by eviction time) while the operator
// committed the version the next batch loads, so that a batch neither reads RocksDB nor scans the
// state to evict; rebuilt by one scan after a restart or a failed batch. While mirrored, a
// partition's store is detached (state::StateStore::DetachWorkingCopy): every change goes to its
// changelog but not to RocksDB, and the snapshots are written from the mirror, so the checkpoint
// holds the same files as without the mirror. Capped by the conf
// `sluice.streaming.deduplicate.stateMirrorMaxBytes` (bytes for all partitions, default 256 MiB,
// 0: off); past it the mirror is given up for the operator's lifetime (MultiGet and scans).
// numRowsTotal is counted by the operator (exact: it puts only absent keys and removes only
// present ones); the stores do not count keys.
//
// Errors: InvalidArgument naming the column for options that do not match the input (a key or
// event-time column missing, an event-time column whose type is not TIMESTAMP, TIMESTAMPTZ, DATE
// or a STRUCT with an "end" field), InvalidArgument from Open for a stateMirrorMaxBytes that is
// not a byte count >= 0, and the state layer's errors with the batch id.
//
// Ownership and threads: see ops/stateful_operator.h (query thread only; partitions run on
// helper threads inside Process).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/status.h"
#include "engine/engine.h"
#include "ops/stateful_operator.h"

namespace sluice::ops {

inline constexpr char kDedupeOperatorName[] = "dedupe";
inline constexpr char kDedupeWithinWatermarkOperatorName[] = "dedupeWithinWatermark";

struct DeduplicateOptions {
  // Names of the input columns that form the key (exact names, as in the input batch). Empty
  // means every input column (SELECT DISTINCT).
  std::vector<std::string> key_columns;
  // Per key column, the key as the query wrote it ("lower(id)"): its name in the state schema, so
  // that a restart with a different key is refused naming both. Empty: the column names.
  std::vector<std::string> key_descriptions;
  // Name of the input's watermarked event-time column; empty when the input does not carry one
  // (then nothing is late and nothing is evicted). Required by DeduplicateWithinWatermark.
  std::string event_time_column;
  // DeduplicateWithinWatermark: the watermark delay of the event-time column (ms), >= 0.
  int64_t delay_ms = 0;
  // SQL ORDER BY items over the input's column names choosing the first row of a key within one
  // batch, e.g. "\"ts\" ASC NULLS LAST"; empty: input order.
  std::string order_by;
  // Partitions run in parallel by up to this many threads (>= 1).
  int parallelism = 1;
};

class DeduplicateOperator;  // the shared implementation (deduplicate.cc)

// dropDuplicates(keys): progress operator name "dedupe".
class Deduplicate final : public StatefulOperator {
 public:
  explicit Deduplicate(DeduplicateOptions options);
  ~Deduplicate() override;

  Status Open(const OperatorContext& context) override;
  // inputs: exactly one batch. Returns its surviving rows (all input columns).
  Result<engine::Batch> Process(const OperatorBatch& batch,
                                const std::vector<engine::Batch>& inputs) override;
  // next > used (Spark's StreamingDeduplicateExec.shouldRunAnotherBatch).
  bool WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const override;
  StateOperatorProgress Progress() const override;

 private:
  std::unique_ptr<DeduplicateOperator> impl_;
};

// dropDuplicatesWithinWatermark(keys): progress operator name "dedupeWithinWatermark".
// options.event_time_column is required.
class DeduplicateWithinWatermark final : public StatefulOperator {
 public:
  explicit DeduplicateWithinWatermark(DeduplicateOptions options);
  ~DeduplicateWithinWatermark() override;

  // InvalidArgument when options.event_time_column is empty or delay_ms < 0.
  Status Open(const OperatorContext& context) override;
  Result<engine::Batch> Process(const OperatorBatch& batch,
                                const std::vector<engine::Batch>& inputs) override;
  // next > used: expired keys are removed by a no-data batch when the watermark advances.
  bool WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const override;
  StateOperatorProgress Progress() const override;

 private:
  std::unique_ptr<DeduplicateOperator> impl_;
};

}  // namespace sluice::ops
