// AutoCdcSink: applies each micro-batch of an AUTO CDC flow (auto_cdc_spec.h) to its target Delta
// table as SCD type 1 or 2 (docs/streaming-sql.md "AUTO CDC flows").
//
// SCD type 1:
// Per key, the batch row with the highest SEQUENCE BY value wins (on a tie a delete wins); it is
// applied only when its sequence is greater than the last sequence applied to that key by this
// flow, so an event older than (or as old as) what the target reflects is ignored. A winner for
// which APPLY AS DELETE WHEN holds deletes the key; otherwise it upserts the selected columns.
// The flow remembers per key the last applied sequence and whether it was a delete (a tombstone,
// as Databricks keeps), in a Delta table `auto_cdc_state` in the flow's checkpoint: so an upsert
// older than a delete that arrives later does not bring the key back. Tombstones are kept for as
// long as the flow's checkpoint exists.
//
// SCD type 2: the target keeps one row per upsert event of a key, with __START_AT = its sequence
// value and __END_AT = the sequence value of the key's next event (upsert or delete), NULL for the
// current row. Every event is applied once, in sequence order whatever its arrival order: a late
// event is inserted into the key's history (splitting the version it falls into). Events whose
// (key, sequence) the flow already applied are ignored; within a batch, a delete wins a tie. The
// state table holds the delete events (key, sequence), since a delete that closes no row leaves
// no trace in the target.
//
// Exactly once: batch N is one MERGE commit into the target carrying txn{appId = query id,
// version = N}, then one commit of the state table carrying the same txn. Both decisions are
// computed from the batch and the state table as of before batch N, so a re-run of N after a
// crash between the two commits skips the target MERGE (its txn is there) and writes the same
// state; a re-run after both skips everything. A batch with nothing to apply commits nothing.
// A NULL sequence value fails the batch (the value is needed to order the key's changes).
//
// Ownership: shares the FileSystem; the Engine must outlive the sink.
// Thread safety: driven by one query thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "delta/dml_merge.h"
#include "delta/table_writer.h"
#include "sinks/sink.h"
#include "sql/auto_cdc_spec.h"

namespace sluice::sql {

struct AutoCdcSinkOptions {
  std::string flow;         // the flow's name, for messages
  std::string target_path;  // the target Delta table (must exist: NotFound otherwise)
  std::string state_path;   // the flow's state table (in its checkpoint)
  std::string query_id;     // the txn appId
  AutoCdcSpec spec;
};

class AutoCdcSink final : public sinks::Sink {
 public:
  // InvalidArgument without paths or query id, or for an SCD type other than 1 or 2.
  static Result<std::unique_ptr<AutoCdcSink>> Open(std::shared_ptr<fs::FileSystem> fs,
                                                   engine::Engine* engine,
                                                   AutoCdcSinkOptions options);

  std::string Description() const override { return "AutoCdcSink[" + options_.target_path + "]"; }
  // `mode` is ignored. Errors name the flow, the batch and the table.
  Status AddBatch(BatchId batch_id, const engine::Batch& data, sinks::OutputMode mode) override;
  // Changes applied to the target by the last AddBatch (0 when skipped).
  std::optional<int64_t> LastNumOutputRows() const override { return last_rows_; }
  // numUpserts / numDeletes (changes applied to the target), numIgnored (input rows superseded
  // within the batch or not newer than the key's last change), skipped, version.
  std::map<std::string, std::string> Metrics() const override { return metrics_; }

 private:
  AutoCdcSink(std::shared_ptr<fs::FileSystem> fs, engine::Engine* engine,
              std::unique_ptr<engine::Connection> conn,
              std::unique_ptr<delta::DeltaTableWriter> target,
              std::unique_ptr<delta::DeltaTableWriter> state, AutoCdcSinkOptions options)
      : fs_(std::move(fs)),
        engine_(engine),
        conn_(std::move(conn)),
        target_(std::move(target)),
        state_(std::move(state)),
        options_(std::move(options)) {}

  // Materializes the batch's changes to apply into the temp table __sluice_cdc_changes.
  Status ComputeChanges(const AutoCdcColumns& cols, const std::string& ctx);
  Status ApplyToTarget(BatchId batch_id, const AutoCdcColumns& cols, const std::string& ctx);
  Status ApplyToState(BatchId batch_id, const AutoCdcColumns& cols, const std::string& ctx);
  // The batch's one MERGE commit into the target, with the flow's txn (query id, batch id);
  // records `total` as the batch's output rows and the commit's version in the metrics.
  Status MergeIntoTarget(const delta::MergeSpec& spec, BatchId batch_id, int64_t total,
                         const std::string& ctx);
  // SCD type 2 (auto_cdc_sink_scd2.cc): the target's history rows of the keys the batch touches
  // are rebuilt from their events, then merged; the state table holds the delete events.
  Status ApplyScd2(BatchId batch_id, const AutoCdcColumns& cols, const std::string& ctx);
  Status ApplyScd2State(BatchId batch_id, const AutoCdcColumns& cols, const std::string& ctx);
  // The SQL reading the latest snapshot of the table at `path`; nullopt when there is none.
  Result<std::optional<std::string>> ScanSql(delta::DeltaTableWriter* writer,
                                             const std::string& path);

  std::shared_ptr<fs::FileSystem> fs_;
  engine::Engine* engine_;
  std::unique_ptr<engine::Connection> conn_;
  std::unique_ptr<delta::DeltaTableWriter> target_;
  std::unique_ptr<delta::DeltaTableWriter> state_;
  AutoCdcSinkOptions options_;
  std::optional<int64_t> last_rows_;
  std::map<std::string, std::string> metrics_;
};

}  // namespace sluice::sql
