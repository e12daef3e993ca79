#include "sinks/delta_sink.h"

namespace sluice::sinks {

Result<std::unique_ptr<DeltaSink>> DeltaSink::Open(std::shared_ptr<fs::FileSystem> fs,
                                                   engine::Engine* engine,
                                                   DeltaSinkOptions options) {
  if (options.path.empty()) return Status::InvalidArgument("Delta sink: no table path given");
  if (options.query_id.empty()) {
    return Status::InvalidArgument("Delta sink " + options.path +
                                   ": no query id given (it is the txn appId of every commit)");
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(
      auto writer,
      delta::DeltaTableWriter::Open(std::move(fs), engine, options.path, options.writer),
      "Delta sink " + options.path);
  return std::unique_ptr<DeltaSink>(new DeltaSink(std::move(writer), std::move(options)));
}

Status DeltaSink::AddBatch(BatchId batch_id, const engine::Batch& data, OutputMode mode) {
  const std::string ctx = "Delta sink " + options_.path + ", batch " + batch_id.ToString();
  if (!SupportsOutputMode(mode)) {
    return Status::NotSupported(
        ctx +
        ": output mode Update (an upsert by key columns, i.e. a MERGE) is not supported "
        "by the Delta sink yet; use Append or Complete, or foreachBatch with a MERGE");
  }
  delta::WriteOptions w;
  w.mode = mode == OutputMode::kComplete ? delta::SaveMode::kOverwrite : delta::SaveMode::kAppend;
  w.merge_schema = options_.merge_schema;
  w.partition_by = options_.partition_by;
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

}  // namespace sluice::sinks
