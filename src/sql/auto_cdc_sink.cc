#include "sql/auto_cdc_sink.h"

#include <chrono>

#include "delta/dml_merge.h"
#include "delta/table.h"
#include "sql/auto_cdc_sql.h"

namespace sluice::sql {
namespace {

using auto_cdc::CountRows;
using auto_cdc::kChanges;
using auto_cdc::kDelete;
using auto_cdc::KeysMatch;
using auto_cdc::kInput;
using auto_cdc::kSeq;
using auto_cdc::kStateDeleted;
using auto_cdc::kStateSeq;
using auto_cdc::List;
using auto_cdc::NowMs;
using auto_cdc::Q;

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v) {
    if (x == s) return true;
  }
  return false;
}

}  // namespace

Result<std::unique_ptr<AutoCdcSink>> AutoCdcSink::Open(std::shared_ptr<fs::FileSystem> fs,
                                                       engine::Engine* engine,
                                                       AutoCdcSinkOptions options) {
  const std::string ctx = "AUTO CDC flow " + options.flow;
  if (options.target_path.empty() || options.state_path.empty()) {
    return Status::InvalidArgument(ctx + ": no target or state table path given");
  }
  if (options.query_id.empty()) return Status::InvalidArgument(ctx + ": no query id given");
  if (engine == nullptr) return Status::InvalidArgument(ctx + ": no engine");
  if (options.spec.scd_type != 1 && options.spec.scd_type != 2) {
    return Status::InvalidArgument(ctx + ": no SCD type " + std::to_string(options.spec.scd_type));
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(auto target,
                              delta::DeltaTableWriter::Open(fs, engine, options.target_path), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(auto state,
                              delta::DeltaTableWriter::Open(fs, engine, options.state_path), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(auto conn, engine->Connect(), ctx);
  return std::unique_ptr<AutoCdcSink>(new AutoCdcSink(std::move(fs), engine, std::move(conn),
                                                      std::move(target), std::move(state),
                                                      std::move(options)));
}

Status AutoCdcSink::AddBatch(BatchId batch_id, const engine::Batch& data, sinks::OutputMode mode) {
  (void)mode;
  const std::string ctx = "AUTO CDC flow " + options_.flow + ", batch " + batch_id.ToString() +
                          " into " + options_.target_path;
  last_rows_ = 0;
  metrics_ = {{"numUpserts", "0"}, {"numDeletes", "0"}, {"numIgnored", "0"}, {"skipped", "false"}};
  SLUICE_ASSIGN_OR_RETURN_CTX(
      AutoCdcColumns cols, ResolveAutoCdcColumns(options_.spec, data.schema(), options_.flow), ctx);
  if (data.num_rows() == 0) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN_CTX(std::shared_ptr<const delta::Snapshot> target, target_->Latest(),
                              ctx);
  if (!target) {
    return Status::NotFound(ctx +
                            ": the target table does not exist (it is created with the "
                            "streaming table or Delta table the flow writes)");
  }
  // The state table records every batch whose changes it holds; both writes are then done.
  SLUICE_ASSIGN_OR_RETURN_CTX(std::shared_ptr<const delta::Snapshot> state, state_->Latest(), ctx);
  if (state) {
    std::optional<int64_t> done = state->TxnVersion(options_.query_id);
    if (done && *done >= batch_id.value()) {
      metrics_["skipped"] = "true";
      return Status::OK();
    }
  }
  SLUICE_RETURN_NOT_OK_CTX(conn_->RegisterBatch(kInput, data), ctx);
  // The view and the temporary tables hold the batch's rows: drop them on every way out.
  struct Cleanup {
    engine::Connection* conn;
    ~Cleanup() {
      (void)conn->UnregisterBatch(kInput);
      (void)conn->Execute("DROP TABLE IF EXISTS " + std::string(kChanges) +
                          "; DROP TABLE IF EXISTS " + std::string(auto_cdc::kEvents));
    }
  } cleanup{conn_.get()};
  SLUICE_ASSIGN_OR_RETURN_CTX(
      int64_t null_seq,
      CountRows(conn_.get(), "SELECT count(*) FROM " + std::string(kInput) + " WHERE " +
                                 Q(cols.sequence_by) + " IS NULL"),
      ctx);
  if (null_seq > 0) {
    return Status::InvalidArgument(ctx + ": " + std::to_string(null_seq) +
                                   " row(s) have a NULL SEQUENCE BY value (column '" +
                                   cols.sequence_by + "'); every change needs one");
  }
  if (options_.spec.scd_type == 2) {
    SLUICE_RETURN_NOT_OK(ApplyScd2(batch_id, cols, ctx));
  } else {
    SLUICE_RETURN_NOT_OK(ComputeChanges(cols, ctx));
    SLUICE_RETURN_NOT_OK(ApplyToTarget(batch_id, cols, ctx));
  }
  metrics_["numIgnored"] = std::to_string(data.num_rows() - std::stoll(metrics_["numUpserts"]) -
                                          std::stoll(metrics_["numDeletes"]));
  if (options_.spec.scd_type == 2) {
    SLUICE_RETURN_NOT_OK(ApplyScd2State(batch_id, cols, ctx));
  } else {
    SLUICE_RETURN_NOT_OK(ApplyToState(batch_id, cols, ctx));
  }
  return Status::OK();
}

Result<std::optional<std::string>> AutoCdcSink::ScanSql(delta::DeltaTableWriter* writer,
                                                        const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<const delta::Snapshot> snap, writer->Latest());
  if (!snap) return std::optional<std::string>();
  SLUICE_ASSIGN_OR_RETURN(auto table, delta::DeltaTable::Open(fs_, engine_, path));
  SLUICE_ASSIGN_OR_RETURN(std::string scan, table->ScanSql(*snap));
  return std::optional<std::string>(std::move(scan));
}

Status AutoCdcSink::ComputeChanges(const AutoCdcColumns& cols, const std::string& ctx) {
  const std::string del =
      options_.spec.delete_when ? "COALESCE((" + *options_.spec.delete_when + "), false)" : "false";
  std::string sql = "CREATE OR REPLACE TEMP TABLE " + std::string(kChanges) + " AS SELECT " +
                    List(cols.selected) + ", " + kSeq + ", " + kDelete + " FROM (SELECT *, " +
                    "row_number() OVER (PARTITION BY " + List(cols.keys) + " ORDER BY " + kSeq +
                    " DESC, " + kDelete + " DESC) AS __cdc_rank FROM (SELECT " +
                    List(cols.selected) + ", " + Q(cols.sequence_by) + " AS " + kSeq + ", " + del +
                    " AS " + kDelete + " FROM " + kInput + ") AS i) AS r WHERE __cdc_rank = 1";
  SLUICE_ASSIGN_OR_RETURN_CTX(std::optional<std::string> scan,
                              ScanSql(state_.get(), options_.state_path), ctx);
  if (scan) {
    // Only changes newer than the last one applied to the key.
    sql += " AND NOT EXISTS (SELECT 1 FROM (" + *scan + ") AS st WHERE " +
           KeysMatch(cols.keys, "st", "r") + " AND st." + kStateSeq + " >= r." + kSeq + ")";
  }
  Status st = conn_->Execute(sql);
  if (!st.ok()) {
    return st.WithContext(ctx + (options_.spec.delete_when
                                     ? " (APPLY AS DELETE WHEN " + *options_.spec.delete_when + ")"
                                     : std::string()));
  }
  return Status::OK();
}

Status AutoCdcSink::ApplyToTarget(BatchId batch_id, const AutoCdcColumns& cols,
                                  const std::string& ctx) {
  const std::string changes(kChanges);
  SLUICE_ASSIGN_OR_RETURN_CTX(int64_t total,
                              CountRows(conn_.get(), "SELECT count(*) FROM " + changes), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(
      int64_t deletes,
      CountRows(conn_.get(), "SELECT count(*) FROM " + changes + " WHERE " + kDelete), ctx);
  metrics_["numUpserts"] = std::to_string(total - deletes);
  metrics_["numDeletes"] = std::to_string(deletes);
  SLUICE_ASSIGN_OR_RETURN_CTX(std::shared_ptr<const delta::Snapshot> latest, target_->Latest(),
                              ctx);
  if (latest) {
    std::optional<int64_t> done = latest->TxnVersion(options_.query_id);
    if (done && *done >= batch_id.value()) {
      metrics_["skipped"] = "true";  // written before a crash; only the state is left to write
      return Status::OK();
    }
  }
  if (total == 0) return Status::OK();
  delta::MergeSpec spec;
  spec.source_sql = changes;
  spec.source_alias = "s";
  spec.target_alias = "t";
  spec.on = KeysMatch(cols.keys, "t", "s");
  delta::MergeClause del;
  del.kind = delta::MergeClauseKind::kMatched;
  del.condition = "s." + std::string(kDelete);
  del.action = delta::MergeActionKind::kDelete;
  spec.clauses.push_back(del);
  delta::MergeClause update;
  update.kind = delta::MergeClauseKind::kMatched;
  update.action = delta::MergeActionKind::kUpdate;
  delta::MergeClause insert;
  insert.kind = delta::MergeClauseKind::kNotMatched;
  insert.condition = "NOT s." + std::string(kDelete);
  insert.action = delta::MergeActionKind::kInsert;
  for (const auto& c : cols.selected) {
    if (!Contains(cols.keys, c)) update.assignments.emplace_back(c, "s." + Q(c));
    insert.assignments.emplace_back(c, "s." + Q(c));
  }
  if (!update.assignments.empty()) spec.clauses.push_back(update);
  spec.clauses.push_back(insert);
  return MergeIntoTarget(spec, batch_id, total, ctx);
}

Status AutoCdcSink::MergeIntoTarget(const delta::MergeSpec& spec, BatchId batch_id, int64_t total,
                                    const std::string& ctx) {
  delta::DmlTable table{target_.get(), fs_, engine_, conn_.get()};
  delta::DmlOptions opts;
  opts.txn = delta::SetTransaction{options_.query_id, batch_id.value(), NowMs()};
  SLUICE_ASSIGN_OR_RETURN_CTX(delta::DmlResult r, delta::MergeInto(table, spec, opts), ctx);
  last_rows_ = total;
  if (r.version) metrics_["version"] = r.version->ToString();
  return Status::OK();
}

Status AutoCdcSink::ApplyToState(BatchId batch_id, const AutoCdcColumns& cols,
                                 const std::string& ctx) {
  const std::string sctx = ctx + ": the flow's state table " + options_.state_path;
  SLUICE_ASSIGN_OR_RETURN_CTX(
      engine::Batch rows,
      conn_->Query("SELECT " + List(cols.keys) + ", " + kSeq + " AS " + kStateSeq + ", " + kDelete +
                   " AS " + kStateDeleted + " FROM " + kChanges),
      sctx);
  if (rows.num_rows() == 0) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN_CTX(std::shared_ptr<const delta::Snapshot> latest, state_->Latest(),
                              sctx);
  if (!latest) {
    delta::WriteOptions w;
    w.txn_app_id = options_.query_id;
    w.txn_version = batch_id.value();
    w.operation = "STREAMING UPDATE";
    SLUICE_RETURN_NOT_OK_CTX(state_->Write(rows, w).status(), sctx);
    return Status::OK();
  }
  delta::MergeSpec spec;
  spec.source_batch = rows;
  spec.source_alias = "s";
  spec.target_alias = "t";
  spec.on = KeysMatch(cols.keys, "t", "s");
  delta::MergeClause update;
  update.kind = delta::MergeClauseKind::kMatched;
  update.action = delta::MergeActionKind::kUpdateAll;
  delta::MergeClause insert;
  insert.kind = delta::MergeClauseKind::kNotMatched;
  insert.action = delta::MergeActionKind::kInsertAll;
  spec.clauses = {update, insert};
  delta::DmlTable table{state_.get(), fs_, engine_, conn_.get()};
  delta::DmlOptions opts;
  opts.txn = delta::SetTransaction{options_.query_id, batch_id.value(), NowMs()};
  SLUICE_RETURN_NOT_OK_CTX(delta::MergeInto(table, spec, opts).status(), sctx);
  return Status::OK();
}

}  // namespace sluice::sql
