#include "connect/batch_write.h"

#include <charconv>

#include "common/strings.h"
#include "delta/table_writer.h"
#include "delta/warehouse_tables.h"
#include "engine/engine.h"
#include "fs/routing_file_system.h"
#include "spark/connect/commands.pb.h"
#include "sql/session.h"

namespace sluice::connect {

namespace sc = spark::connect;

namespace {

Status NotYet(const std::string& what) {
  return Status::NotSupported("Spark Connect: " + what + " is not supported by Sluice yet");
}

Result<delta::WriteOptions> WriteOptionsOf(const sc::WriteOperation& w) {
  delta::WriteOptions opts;
  switch (w.mode()) {
    case sc::WriteOperation::SAVE_MODE_APPEND:
      opts.mode = delta::SaveMode::kAppend;
      break;
    case sc::WriteOperation::SAVE_MODE_OVERWRITE:
      opts.mode = delta::SaveMode::kOverwrite;
      break;
    case sc::WriteOperation::SAVE_MODE_UNSPECIFIED:  // Spark's default: errorifexists
    case sc::WriteOperation::SAVE_MODE_ERROR_IF_EXISTS:
      opts.mode = delta::SaveMode::kErrorIfExists;
      break;
    case sc::WriteOperation::SAVE_MODE_IGNORE:
      return NotYet("df.write.mode('ignore')");
    default:
      return NotYet("df.write.mode(" + std::to_string(static_cast<int>(w.mode())) + ")");
  }
  opts.partition_by.assign(w.partitioning_columns().begin(), w.partitioning_columns().end());
  for (const auto& [key, value] : w.options()) {
    const std::string k = AsciiLower(key);
    if (k == "txnappid") {
      opts.txn_app_id = value;
    } else if (k == "txnversion") {
      int64_t v = -1;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || end != value.data() + value.size() || v < 0) {
        return Status::InvalidArgument(
            "df.write option txnVersion must be a non-negative "
            "integer, got '" +
            value + "'");
      }
      opts.txn_version = v;
    } else if (k == "mergeschema") {
      opts.merge_schema = AsciiLower(value) == "true";
    } else if (k.rfind("delta.", 0) == 0) {
      opts.configuration[key] = value;
    } else {
      return Status::InvalidArgument("df.write: unknown option '" + key +
                                     "' for a Delta write (known: txnAppId, txnVersion, "
                                     "mergeSchema, delta.* table properties)");
    }
  }
  if (opts.txn_app_id.has_value() != opts.txn_version.has_value()) {
    return Status::InvalidArgument(
        "df.write: txnAppId and txnVersion must be given together (Delta's idempotent writes)");
  }
  return opts;
}

}  // namespace

Status RunWriteOperation(const sc::WriteOperation& w, PlanTranslator& t, sql::Session& session,
                         engine::Engine& engine,
                         const std::optional<delta::SetTransaction>& conf_txn) {
  if (w.sort_column_names_size()) return NotYet("df.write.sortBy");
  if (w.has_bucket_by()) return NotYet("df.write.bucketBy");
  if (w.clustering_columns_size()) return NotYet("df.write.clusterBy");
  const bool named = w.has_table();
  if (w.has_source() && AsciiLower(w.source()) != "delta") {
    return NotYet("df.write.format('" + w.source() + "') (Sluice writes Delta tables)");
  }
  if (!w.has_source() && !named) {
    return NotYet(
        "df.write.save(path) without format('delta') (Spark's default source, "
        "parquet files)");
  }
  if (!named && !w.has_path()) return NotYet("df.write.save() without a path");
  SLUICE_ASSIGN_OR_RETURN(std::string query, t.Query(w.input()));
  if (named &&
      w.table().save_method() == sc::WriteOperation::SaveTable::TABLE_SAVE_METHOD_INSERT_INTO) {
    if (w.options_size() || w.partitioning_columns_size()) {
      return NotYet("df.write.insertInto with options or partitionBy");
    }
    if (w.mode() == sc::WriteOperation::SAVE_MODE_OVERWRITE) {
      return NotYet("df.write.insertInto(name, overwrite=True)");
    }
    session.SetIdempotentTxn(conf_txn);
    Status st =
        session.Execute("INSERT INTO " + QuoteIdentifier(w.table().table_name()) + " " + query)
            .status();
    session.SetIdempotentTxn(std::nullopt);
    return st;
  }
  SLUICE_ASSIGN_OR_RETURN(delta::WriteOptions opts, WriteOptionsOf(w));
  if (conf_txn && !opts.txn_app_id) {
    opts.txn_app_id = conf_txn->app_id;
    opts.txn_version = conf_txn->version;
  }
  std::shared_ptr<fs::FileSystem> fs = fs::PathFileSystem();
  std::string path = w.has_path() ? w.path() : "";
  if (named) {
    SLUICE_ASSIGN_OR_RETURN(
        path, delta::ResolveWarehouseTable(fs.get(), session.warehouse(), w.table().table_name()));
  }
  SLUICE_ASSIGN_OR_RETURN(engine::Batch rows, session.Execute(query));
  SLUICE_ASSIGN_OR_RETURN(auto writer, delta::DeltaTableWriter::Open(fs, &engine, path));
  Result<delta::WriteResult> r = writer->Write(rows, opts);
  if (!r.ok()) {
    return r.status().WithContext("df.write to " + (named ? w.table().table_name() : path));
  }
  return Status::OK();
}

}  // namespace sluice::connect
