// StreamingAggregate: Spark's streaming aggregation (StateStoreSaveExec "stateStoreSave") and
// session window aggregation ("sessionWindowStateStoreSaveExec") over the state store.
// docs/streaming-plan.md §4, docs/streaming-sql.md.
//
// Input (one batch): the plain grouping keys, the window's event time and the aggregate
// arguments, one column each (names in StreamingAggregateOptions). Per batch:
//  1. partial aggregation of the batch per (keys, window) in DuckDB (a sliding window puts a row
//     in every window that contains it; a session window merges the batch's rows per key);
//  2. late partial rows (window end / event-time key <= late watermark) are dropped and counted
//     in numRowsDroppedByWatermark (after partial aggregation, as Spark counts); not in COMPLETE;
//  3. merge with the state (sessions: overlapping sessions of a key merge into one): in C++
//     on the row-codec bytes when every partial allows it (ops/aggregate_merge.h; step 2 then
//     happens in the same pass), else by a DuckDB query over the decoded state rows;
//  4. output: COMPLETE every group; UPDATE the groups written this batch; APPEND the groups whose
//     window end / event-time key <= eviction watermark, which are removed from the state (UPDATE
//     removes them silently).
// A global aggregation (no keys, no window) is Spark's aggregation without grouping keys: the
// partial of an empty input is the initial row (count 0, the other partials NULL). So a batch
// without input rows (a no-data batch, a batch whose rows a WHERE removed) emits the stored row
// again in UPDATE mode, and before any row stores and emits the initial row (with first / last,
// whose merge would keep the initial NULL as a value, it is emitted but not stored).
// The state schema (checked on restart, state/operator_metadata.h) names the keys, the window and
// the partial aggregates by their descriptions as written in the query, so that a restart with a
// different grouping key or aggregate list fails with an error that names the difference.
// Output columns: the plain keys (input names), then the window column (options.window->output,
// a STRUCT(start, "end") of the event time's type) when there is one, then one column per
// aggregate (AggregateCall::output) with its final value.
// State mirror (not sessions): the operator keeps an in-memory copy of its state
// (ops/streaming_aggregate_mirror.h) while it has committed the version the next batch loads, so
// step 3 reads no RocksDB and step 4's eviction touches only what expires instead of scanning
// the state. It is rebuilt from the store (one scan) after a restart, a failed batch or a re-run
// batch, and given up for the operator's lifetime once it would exceed
// `sluice.streaming.aggregate.stateMirrorMaxBytes` (default 256 MiB; 0 turns it off). The store
// stays the state: every write still goes to it and results do not depend on the mirror. With
// the mirror the stores do not count keys (state::StateStoreOptions::track_num_keys = false, so
// that a write or removal reads nothing): numRowsTotal is the mirror's size, or RocksDB's
// estimate once the mirror has been given up.
// Per-window top-1 (options.keep_top, APPEND with a tumbling / sliding window): step 1 keeps per
// window only the batch's rows with the best order value, and before step 3 batch groups below
// the state's best of their window are dropped and state groups a better value beats removed
// (ops/streaming_aggregate_top.h); the emitted groups are then exactly each window's best.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/operator_state.h"
#include "ops/stateful_operator.h"
#include "ops/streaming_aggregate_mirror.h"
#include "ops/streaming_aggregate_top.h"
#include "state/partitions.h"

namespace sluice::ops {

struct AggregatePartial;  // ops/streaming_aggregate_sql.h

enum class AggregateFunction {
  kCountStar,
  kCount,
  kSum,
  kMin,
  kMax,
  kAvg,
  kFirst,
  kLast,
  kApproxCountDistinct,  // a HyperLogLog sketch per group (ops/hll_sql.h)
};

// "count", "sum", ... (lower case, as written in SQL); nullopt for any other name.
std::optional<AggregateFunction> AggregateFunctionFromName(std::string_view name, bool star);

struct AggregateCall {
  AggregateFunction function = AggregateFunction::kCountStar;
  std::string argument;  // input column; empty for count(*)
  std::string output;    // output column
  // kApproxCountDistinct: the sketch's precision p (ops/hll_sql.h; 9 = Spark's default rsd 0.05).
  int hll_precision = 9;
  // The call as the query wrote it ("sum(v)"): names its partial columns in the state schema, so
  // that a restart with a changed aggregate list is refused naming it. Empty: `output`.
  std::string description;
};

struct TimeWindowSpec {
  enum class Kind { kTumbling, kSliding, kSession };
  Kind kind = Kind::kTumbling;
  std::string time_column;        // input column: the event time (TIMESTAMP / TIMESTAMPTZ)
  int64_t size_us = 0;            // window length (tumbling, sliding)
  int64_t slide_us = 0;           // slide (sliding; = size_us for tumbling)
  int64_t gap_us = 0;             // session gap
  std::string output = "window";  // the output column: "window" / "session_window"
  bool watermarked = false;       // the event time carries a watermark: late drop and eviction
};

struct StreamingAggregateOptions {
  std::vector<std::string> keys;  // input columns that are plain grouping keys
  // SQL's `SELECT DISTINCT *` (Spark's Distinct of every column): the keys are every input
  // column, in input order, known at the first batch (`keys` must then be empty; no window).
  // `event_time_key` names the watermarked column among them case-insensitively; in APPEND mode
  // the first batch fails when the input has no such column (Spark's "without watermark").
  bool keys_from_input = false;
  // Per key, the grouping expression as the query wrote it ("lower(name)"): the key's name in the
  // state schema (a restart with a different grouping key is refused naming both). Empty: the
  // input column names.
  std::vector<std::string> key_descriptions;
  // The window as the query wrote it ("window(ts, '5 seconds')"), for the state schema. Empty:
  // the window's output column name.
  std::string window_description;
  std::optional<TimeWindowSpec> window;
  // A plain key column that is a watermarked event time (GROUP BY ts): late drop and eviction
  // by its value. Ignored when `window` is watermarked.
  std::optional<std::string> event_time_key;
  std::vector<AggregateCall> aggregates;
  // The planner's per-window top-1 hint (ops/streaming_aggregate_top.h): APPEND with a
  // watermarked tumbling / sliding window keeps per window only the groups with the best value
  // of this grouping key. Ignored where it cannot apply (the results never depend on it).
  std::optional<KeepTopSpec> keep_top;
};

class StreamingAggregate final : public StatefulOperator {
 public:
  explicit StreamingAggregate(StreamingAggregateOptions options);
  ~StreamingAggregate() override;

  Status Open(const OperatorContext& context) override;
  Result<engine::Batch> Process(const OperatorBatch& batch,
                                const std::vector<engine::Batch>& inputs) override;
  bool WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const override;
  StateOperatorProgress Progress() const override { return progress_; }

  // "stateStoreSave" or, for session windows, "sessionWindowStateStoreSaveExec".
  std::string name() const;
  // The planner's per-window top-1 hint (StreamingAggregateOptions::keep_top); before Open.
  void set_keep_top(std::optional<KeepTopSpec> spec) { options_.keep_top = std::move(spec); }
  const std::optional<KeepTopSpec>& keep_top() const { return options_.keep_top; }
  bool has_watermark() const;

 private:
  struct Sql;        // the SQL texts built from the input schema at the first batch
  struct BatchWork;  // one batch's rows and counts, shared by the phases
  Status PrepareSql(const engine::Schema& input_schema);
  // options_.keys_from_input: every input column becomes a key (the first batch).
  Status KeysFromInput(const engine::Schema& input_schema);
  // The state stores, once the state row (partials) is known.
  Status OpenState(const std::vector<AggregatePartial>& partials);

  // The phases of Process (docs/operators.md), in order. Partial: the batch's partial rows per
  // group, late ones dropped (steps 1-2).
  Status Partial(BatchWork& w);
  // No keys and no window (the header comment's global aggregation).
  bool global() const;
  // The initial row of a global aggregation can be stored (no first / last).
  bool InitialRowStorable() const;
  // A global aggregation's batch without input rows: true with w.merged = the stored row (which
  // then stays as it is) or the initial row that is not storable; false when there is no stored
  // row (w.partial, the initial row, is then merged and stored).
  Result<bool> StoredGlobalRow(const std::vector<state::StateStore*>& stores, BatchWork& w);
  // Inside OperatorState::RunBatchOverAll, over the loaded stores (stores[p] is partition p):
  // SyncMirror: the mirror equals the loaded version, or is rebuilt (or given up).
  Status SyncMirror(const std::vector<state::StateStore*>& stores, int64_t version, BatchWork& w);
  // Load and merge (step 3): the stored rows of the batch's groups and the merged rows (the C++
  // merge also writes them).
  Status LoadAndMerge(const std::vector<state::StateStore*>& stores, BatchWork& w);
  // Write: the merged rows into the stores (and the mirror); sessions' replaced rows removed.
  Status Write(const std::vector<state::StateStore*>& stores, BatchWork& w);
  // Evict: rows the eviction watermark passed are removed (APPEND: and emitted).
  Status Evict(const std::vector<state::StateStore*>& stores, BatchWork& w);
  // Emit: the output rows per mode, finalized (step 4).
  Status Emit(const std::vector<state::StateStore*>& stores, BatchWork& w);
  void FillProgress(const std::vector<state::StateStoreMetrics>& committed, const BatchWork& w);
  void GiveUpMirror(BatchWork& w);
  Result<std::vector<std::string>> GroupKeys(const engine::Batch& b) const;
  // Steps 3-5 with the C++ merge (ops/aggregate_merge.h): per partition in parallel, reads each
  // batch group's state row (mirror or store), merges the partial row into it and writes it.
  // Rows whose eviction time is <= late_us are skipped and counted in *dropped. Returns the
  // number of rows written; with `want_rows` (UPDATE), *merged gets them as a batch.
  Result<int64_t> MergeInCpp(const engine::Batch& partial,
                             const std::vector<std::string>& group_keys,
                             const std::vector<state::StateStore*>& stores, bool mirrored,
                             int64_t late_us, bool want_rows, int64_t* dropped,
                             engine::Batch* merged);

  StreamingAggregateOptions options_;
  OperatorContext context_;
  std::unique_ptr<engine::Connection> conn_;
  std::unique_ptr<OperatorState> state_;  // opened by PrepareSql (the first batch)
  std::unique_ptr<Sql> sql_;
  StateOperatorProgress progress_;
  std::vector<StateMirror> mirror_;  // one per partition (see the header comment)
  int64_t mirror_version_ = -1;      // the store version the mirror equals; -1: none
  bool mirror_off_ = false;          // given up (too large or turned off)
  size_t mirror_max_bytes_ = size_t{256} << 20;
  std::unique_ptr<TopOneFilter> top_;  // options_.keep_top where it applies (PrepareSql)
};

}  // namespace sluice::ops
