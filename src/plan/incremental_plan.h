// IncrementalPlan: the interface between the micro-batch loop (micro_batch_execution.h) and the
// query it runs. Per batch the loop hands over the rows each source produced for the batch, the
// batch's id, watermarks and timestamp; the plan returns the rows for the sink plus what the loop
// needs to move event time forward (per-watermark-node event-time stats) and to report progress
// (state operators).
//
// Stateful plans (aggregation, dedup, joins, transformWithState over a state store) plug in here:
// - state version N is loaded and version N+1 written inside Execute, by each operator's
//   ops::OperatorState (docs/operators.md); the loop's crash point "after_state_commit"
//   (fs::CrashPoint) is right after Execute returns, before the sink;
// - watermark_nodes() declares the withWatermark nodes; Execute reports each node's event-time
//   stats of ALL rows that passed it (late ones included) so the loop's WatermarkTracker computes
//   the next global watermark (docs/streaming-sql.md "Event time and watermarks");
// - WantsNoDataBatch(next watermark) asks the loop for a no-data batch (§5, "No-data batch").
//
// Layer: plan/ (below stream/): the loop in stream/ drives plans; sql/ and api/ build them.
// Ownership: the loop owns the plan. Thread safety: driven by the query thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ids.h"
#include "common/result.h"
#include "engine/engine.h"
#include "engine/relation_names.h"
#include "fs/file_system.h"
#include "ops/operator_progress.h"
#include "sinks/sink.h"

namespace sluice::plan {

// What a plan gets once, before the first batch.
struct PlanContext {
  engine::Engine* engine = nullptr;         // outlives the plan
  std::shared_ptr<fs::FileSystem> fs;       // the query's (crash points, state files)
  std::string checkpoint_root;              // state lives in <root>/state
  std::map<std::string, std::string> conf;  // the persisted conf the run uses (restored)
  sluice::OutputMode output_mode = sluice::OutputMode::kAppend;
  // Called by the plan on its own connection before each batch runs its SQL: makes the static
  // (non-STREAM) relations of the query readable at their latest snapshot. May be empty.
  std::function<Status(engine::Connection&)> prepare_connection;
};

// One withWatermark node of the plan.
struct WatermarkNode {
  std::string column;    // the event-time column (for messages and progress)
  int64_t delay_ms = 0;  // the declared delay
};

// Event-time statistics of the rows that passed one watermark node in one batch (ms).
struct EventTimeStats {
  int64_t max_ms = 0;
  int64_t min_ms = 0;
  double avg_ms = 0;
  int64_t count = 0;  // 0: no rows passed (the node saw no data this batch)
};

struct PlanInput {
  BatchId batch_id{0};
  // Per source, in plan order: the rows of (start, end]; a source without new rows gives an
  // empty batch with its schema.
  std::vector<engine::Batch> sources;
  // The global watermark this batch runs with (eviction threshold), offsets/<N>.batchWatermarkMs.
  int64_t batch_watermark_ms = 0;
  // The watermark of the previous batch (late-row threshold); the recovered one after a restart.
  int64_t previous_watermark_ms = 0;
  // current_timestamp() of the batch, offsets/<N>.batchTimestampMs.
  int64_t batch_timestamp_ms = 0;
  // True when the batch was constructed only because WantsNoDataBatch asked for it.
  bool no_data_batch = false;
};

struct PlanOutput {
  engine::Batch rows;  // what the sink gets
  // One entry per watermark_nodes() entry (may be empty when the plan has none).
  std::vector<EventTimeStats> event_time;
  // For progress stateOperators (empty for stateless plans).
  std::vector<ops::StateOperatorProgress> state_operators;
};

class IncrementalPlan {
 public:
  virtual ~IncrementalPlan() = default;

  // Called once before the first batch (after the restart decision, so `context.conf` is the
  // restored conf).
  virtual Status Open(const PlanContext& context) = 0;
  // The number of streaming sources the plan reads (must equal the query's sources).
  virtual size_t num_sources() const = 0;
  // The withWatermark nodes, in plan order (empty: the plan has no event time).
  virtual std::vector<WatermarkNode> watermark_nodes() const { return {}; }
  // Runs batch `input.batch_id`. Must be deterministic for a re-run of the same batch.
  virtual Result<PlanOutput> Execute(const PlanInput& input) = 0;
  // After a batch that used eviction watermark `used_watermark_ms`: whether a batch without new
  // data should run now that the global watermark is `next_watermark_ms` (Spark's
  // shouldRunAnotherBatch). Stateless plans never need one.
  virtual bool WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const {
    (void)used_watermark_ms;
    (void)next_watermark_ms;
    return false;
  }
  // A short description for messages ("SqlPlan[SELECT ...]").
  virtual std::string Description() const = 0;
};

// True when `sql` is `SELECT * FROM <table> [[AS] alias]` and nothing else (any case, spacing and
// comments, an optional ';', names plain or double-quoted): its result is `table`'s rows and
// columns unchanged, so a plan hands the input batch on without running the statement (no copy of
// the batch). False for anything else, including text that does not tokenize.
bool IsSelectStarFrom(std::string_view sql, std::string_view table);

// A stateless plan: each source's batch is registered as `__source_<i>` on a private Connection
// and `sql` runs over them; its result is the output. When `sql` is `SELECT * FROM __source_0`
// (IsSelectStarFrom) the output is the source batch itself, shared, not copied. Example:
//   SqlPlan("SELECT id, upper(name) AS name FROM __source_0 WHERE id > 0", 1)
class SqlPlan final : public IncrementalPlan {
 public:
  SqlPlan(std::string sql, size_t num_sources)
      : sql_(std::move(sql)),
        num_sources_(num_sources),
        identity_(num_sources_ == 1 && IsSelectStarFrom(sql_, engine::SourceTableName(0))) {}

  Status Open(const PlanContext& context) override;
  size_t num_sources() const override { return num_sources_; }
  // Errors carry the batch id and DuckDB's message.
  Result<PlanOutput> Execute(const PlanInput& input) override;
  std::string Description() const override { return "SqlPlan[" + sql_ + "]"; }

 private:
  std::string sql_;
  size_t num_sources_;
  bool identity_;  // sql_ is SELECT * FROM __source_0: the output is the input batch
  std::unique_ptr<engine::Connection> conn_;
  std::function<Status(engine::Connection&)> context_prepare_;
};

}  // namespace sluice::plan
