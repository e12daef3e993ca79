// DeltaSink: writes each micro-batch to a Delta table, exactly once (Spark's DeltaSink).
//
// Every batch is one Delta commit made with DeltaTableWriter::Write and carrying
// txn{appId = query id, version = batch id}; the writer skips the write when the table already
// records that appId at a version >= the batch id. So a re-run of batch N after a crash between
// the Delta commit and commits/<N> writes nothing twice. The commit's operation is
// "STREAMING UPDATE" with operationParameters {outputMode, queryId, epochId}.
//
// Output modes: Append adds the rows; Complete replaces the whole table with them (an overwrite
// in the same commit as the txn). Update (an upsert by key columns, a MERGE) is NotSupported
// until the Delta MERGE (src/delta/dml_merge.h) exists.
//
// The query id must be the checkpoint's (stream/checkpoint_metadata.h): a new checkpoint gets a
// new id and so starts a new txn sequence at batch 0.
//
// Ownership: shares the FileSystem; the Engine must outlive the sink.
// Thread safety: driven by one query thread.
#pragma once

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
  delta::TableWriterOptions writer;       // commit options (fsync, retries), checkpoints
};

class DeltaSink final : public Sink {
 public:
  // InvalidArgument without a path or query id.
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

  // Whether AddBatch accepts `mode` (Append and Complete).
  static bool SupportsOutputMode(OutputMode mode) { return mode != OutputMode::kUpdate; }

 private:
  DeltaSink(std::unique_ptr<delta::DeltaTableWriter> writer, DeltaSinkOptions options)
      : writer_(std::move(writer)), options_(std::move(options)) {}

  std::unique_ptr<delta::DeltaTableWriter> writer_;
  DeltaSinkOptions options_;
  std::optional<int64_t> last_rows_;
  std::map<std::string, std::string> metrics_;
};

}  // namespace sluice::sinks
