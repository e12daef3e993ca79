#include "sinks/delta_sink.h"

#include "common/clock.h"
#include "common/strings.h"
#include "delta/dml_merge.h"

namespace sluice::sinks {
namespace {}  // namespace

Result<std::unique_ptr<DeltaSink>> DeltaSink::Open(std::shared_ptr<fs::FileSystem> fs,
                                                   engine::Engine* engine,
                                                   DeltaSinkOptions options) {
  if (options.path.empty()) return Status::InvalidArgument("Delta sink: no table path given");
  if (options.query_id.empty()) {
    return Status::InvalidArgument("Delta sink " + options.path +
                                   ": no query id given (it is the txn appId of every commit)");
  }
  if (engine == nullptr) return Status::InvalidArgument("Delta sink: no engine");
  if (options.update_single_row && !options.update_keys.empty()) {
    return Status::InvalidArgument(
        "Delta sink " + options.path +
        ": update_single_row (a global aggregation) takes no update keys");
  }
  // A micro-batch must not wait for the Delta checkpoint (every 10th commit): the commit is
  // durable without it, so it is written after AddBatch returns (delta/post_commit.h).
  options.writer.background_checkpoints = options.background_checkpoints;
  SLUICE_ASSIGN_OR_RETURN_CTX(
      auto writer, delta::DeltaTableWriter::Open(fs, engine, options.path, options.writer),
      "Delta sink " + options.path);
  SLUICE_ASSIGN_OR_RETURN_CTX(auto conn, engine->Connect(), "Delta sink " + options.path);
  return std::unique_ptr<DeltaSink>(
      new DeltaSink(std::move(writer), std::move(conn), std::move(fs), engine, std::move(options)));
}

Status DeltaSink::AddBatch(BatchId batch_id, const engine::Batch& data, OutputMode mode) {
  const std::string ctx = "Delta sink " + options_.path + ", batch " + batch_id.ToString();
  SLUICE_ASSIGN_OR_RETURN_CTX(std::shared_ptr<const delta::Snapshot> latest, writer_->Latest(),
                              ctx);
  const bool table_exists = latest != nullptr;
  if (table_exists && mode != OutputMode::kComplete && data.num_rows() == 0) {
    // Nothing to write: no commit (docs/sql-reference.md).
    last_rows_ = 0;
    metrics_ = {{"numFiles", "0"}, {"numBytes", "0"}, {"skipped", "false"}};
    return Status::OK();
  }
  if (mode == OutputMode::kUpdate && options_.update_single_row && data.num_rows() > 1) {
    return Status::InvalidArgument(
        ctx + ": the table of a global aggregation holds one row, but the batch has " +
        std::to_string(data.num_rows()) + " rows");
  }
  // Update without keys (a query without aggregation): every row is new, an append (Spark).
  if (mode == OutputMode::kUpdate && table_exists &&
      (!options_.update_keys.empty() || options_.update_single_row)) {
    return Merge(batch_id, data, ctx);
  }
  delta::WriteOptions w;
  // Update mode on a new table: the first batch's rows are all new keys, an append.
  w.mode = mode == OutputMode::kComplete ? delta::SaveMode::kOverwrite : delta::SaveMode::kAppend;
  w.merge_schema = options_.merge_schema;
  w.partition_by = options_.partition_by;
  w.configuration = options_.configuration;
  w.txn_app_id = options_.query_id;
  w.txn_version = batch_id.value();
  w.operation = "STREAMING UPDATE";
  w.operation_parameters = {{"outputMode", OutputModeName(mode)},
                            {"queryId", options_.query_id},
                            {"epochId", batch_id.ToString()}};
  SLUICE_ASSIGN_OR_RETURN_CTX(delta::WriteResult r, writer_->Write(data, w), ctx);
  last_rows_ = r.skipped ? 0 : r.num_rows;
  metrics_ = {{"numFiles", std::to_string(r.num_files)},
              {"numBytes", std::to_string(r.num_bytes)},
              {"skipped", r.skipped ? "true" : "false"}};
  if (r.version) metrics_["version"] = r.version->ToString();
  return Status::OK();
}

Status DeltaSink::Merge(BatchId batch_id, const engine::Batch& data, const std::string& ctx) {
  SLUICE_ASSIGN_OR_RETURN_CTX(
      std::optional<int64_t> done,
      [&]() -> Result<std::optional<int64_t>> {
        SLUICE_ASSIGN_OR_RETURN(auto snap, writer_->Latest());
        return snap->TxnVersion(options_.query_id);
      }(),
      ctx);
  if (done && *done >= batch_id.value()) {
    last_rows_ = 0;
    metrics_ = {{"numFiles", "0"}, {"numBytes", "0"}, {"skipped", "true"}};
    return Status::OK();
  }
  delta::MergeSpec spec;
  spec.source_batch = data;
  spec.source_alias = "s";
  spec.target_alias = "t";
  for (size_t i = 0; i < options_.update_keys.size(); ++i) {
    const std::string k = QuoteIdentifier(options_.update_keys[i]);
    if (i > 0) spec.on += " AND ";
    spec.on += "t." + k + " IS NOT DISTINCT FROM s." + k;
  }
  // A global aggregation's one row matches whatever row the table holds.
  if (options_.update_single_row) spec.on = "TRUE";
  delta::MergeClause update;
  update.kind = delta::MergeClauseKind::kMatched;
  update.action = delta::MergeActionKind::kUpdateAll;
  delta::MergeClause insert;
  insert.kind = delta::MergeClauseKind::kNotMatched;
  insert.action = delta::MergeActionKind::kInsertAll;
  spec.clauses = {update, insert};
  delta::DmlTable table{writer_.get(), fs_, engine_, conn_.get()};
  delta::DmlOptions opts;
  opts.txn = delta::SetTransaction{options_.query_id, batch_id.value(), DefaultClock()->NowMs()};
  SLUICE_ASSIGN_OR_RETURN_CTX(delta::DmlResult r, delta::MergeInto(table, spec, opts), ctx);
  last_rows_ = data.num_rows();
  metrics_ = {
      {"numFiles", std::to_string(r.added_files.size())}, {"numBytes", "0"}, {"skipped", "false"}};
  if (r.version) metrics_["version"] = r.version->ToString();
  return Status::OK();
}

}  // namespace sluice::sinks
