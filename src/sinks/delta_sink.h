// DeltaSink: writes each micro-batch to a Delta table, exactly once (Spark's DeltaSink).
//
// Every batch that writes rows is one Delta commit carrying txn{appId = query id, version =
// batch id}; a batch whose txn the table already records is skipped. So a re-run of batch N after
// a crash between the Delta commit and commits/<N> writes nothing twice. Appends and overwrites go
// through DeltaTableWriter::Write (operation "STREAMING UPDATE" with operationParameters
// {outputMode, queryId, epochId}).
//
// Output modes:
// - Append adds the rows. A batch without rows makes no commit (except the first one of a table
//   that does not exist yet: it creates the table with the batch's schema).
// - Complete replaces the whole table with the rows (an overwrite in the same commit as the txn),
//   every batch.
// - Update upserts the rows by `update_keys` with a Delta MERGE (dml_merge.h: WHEN MATCHED UPDATE
//   SET *, WHEN NOT MATCHED INSERT *, keys compared with IS NOT DISTINCT FROM) whose commit
//   carries the txn; with the change data feed on, the table's feed shows update_preimage /
//   update_postimage for changed keys. A batch without rows makes no commit. Without update_keys
//   (a query without aggregation) Update appends, as in Spark.
// - Update with `update_single_row` (a global aggregation: one group, no key) keeps the table at
//   one row: a batch's row replaces it by a MERGE ON TRUE (WHEN MATCHED UPDATE SET *, WHEN NOT
//   MATCHED INSERT *) in one commit carrying the txn, so the feed shows update_preimage /
//   update_postimage; the first row of an empty table is inserted. A batch of more than one row
//   is refused (InvalidArgument); a batch without rows makes no commit.
//
// Delta checkpoints (every delta.checkpointInterval commits) and log cleanup run, by default
// (DeltaSinkOptions::background_checkpoints), on a background thread of the table writer after
// the commit (delta/post_commit.h), so AddBatch returns once the
// commit is durable; destroying the sink waits for a running checkpoint.
//
// The query id must be the checkpoint's (stream/checkpoint_metadata.h): a new checkpoint gets a
// new id and so starts a new txn sequence at batch 0.
//
// Ownership: shares the FileSystem; the Engine must outlive the sink.
// Thread safety: driven by one query thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "delta/table_writer.h"
#include "sinks/sink.h"

namespace sluice::sinks {

struct DeltaSinkOptions {
  std::string path;      // the table's root; the table is created by the first batch if absent
  std::string query_id;  // required: the txn appId (the streaming query id)
  std::vector<std::string> partition_by;  // partition columns of a new table
  bool merge_schema = false;              // mergeSchema: add new columns to the table schema
  // Table properties of a table the sink creates (e.g. delta.enableChangeDataFeed = true).
  std::map<std::string, std::string> configuration;
  // Update mode: the output columns that identify a row of the table (the MERGE key).
  std::vector<std::string> update_keys;
  // Update mode of a global aggregation: the table holds one row, replaced by each batch's row
  // (update_keys must then be empty).
  bool update_single_row = false;
  delta::TableWriterOptions writer;  // commit options (fsync, retries), checkpoints
  // Write Delta checkpoints after AddBatch returns, on the writer's background thread
  // (overrides writer.background_checkpoints). False: inside the AddBatch that commits.
  bool background_checkpoints = true;
};

class DeltaSink final : public Sink {
 public:
  // InvalidArgument without a path or query id, or with both update_keys and
  // update_single_row.
  static Result<std::unique_ptr<DeltaSink>> Open(std::shared_ptr<fs::FileSystem> fs,
                                                 engine::Engine* engine, DeltaSinkOptions options);

  // "DeltaSink[<path>]".
  std::string Description() const override { return "DeltaSink[" + options_.path + "]"; }
  // Errors name the batch and the table.
  Status AddBatch(BatchId batch_id, const engine::Batch& data, OutputMode mode) override;
  // Rows committed by the last AddBatch (0 when it was skipped as already written).
  std::optional<int64_t> LastNumOutputRows() const override { return last_rows_; }
  // numFiles, numBytes, skipped ("true" when the last batch was already in the table), version.
  std::map<std::string, std::string> Metrics() const override { return metrics_; }

  // Whether AddBatch accepts `mode` (all three).
  static bool SupportsOutputMode(OutputMode mode) {
    (void)mode;
    return true;
  }

 private:
  DeltaSink(std::unique_ptr<delta::DeltaTableWriter> writer,
            std::unique_ptr<engine::Connection> conn, std::shared_ptr<fs::FileSystem> fs,
            engine::Engine* engine, DeltaSinkOptions options)
      : writer_(std::move(writer)),
        conn_(std::move(conn)),
        fs_(std::move(fs)),
        engine_(engine),
        options_(std::move(options)) {}

  // Update mode: MERGE of `data` by the update keys (or ON TRUE with update_single_row), with
  // the txn in the same commit.
  Status Merge(BatchId batch_id, const engine::Batch& data, const std::string& ctx);

  std::unique_ptr<delta::DeltaTableWriter> writer_;
  std::unique_ptr<engine::Connection> conn_;  // MERGE queries
  std::shared_ptr<fs::FileSystem> fs_;
  engine::Engine* engine_;
  DeltaSinkOptions options_;
  std::optional<int64_t> last_rows_;
  std::map<std::string, std::string> metrics_;
};

}  // namespace sluice::sinks
