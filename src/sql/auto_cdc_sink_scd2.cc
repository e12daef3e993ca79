// AutoCdcSink's SCD type 2 path (auto_cdc_sink.h).
#include "delta/dml_merge.h"
#include "sql/auto_cdc_sink.h"
#include "sql/auto_cdc_sql.h"

namespace sluice::sql {

using auto_cdc::CountRows;
using auto_cdc::kChanges;
using auto_cdc::kDelete;
using auto_cdc::kEndAt;
using auto_cdc::kEvents;
using auto_cdc::KeysMatch;
using auto_cdc::kInput;
using auto_cdc::kSeq;
using auto_cdc::kStartAt;
using auto_cdc::kStateDeleted;
using auto_cdc::kStateSeq;
using auto_cdc::List;
using auto_cdc::NowMs;
using auto_cdc::Q;

Status AutoCdcSink::ApplyScd2(BatchId batch_id, const AutoCdcColumns& cols,
                              const std::string& ctx) {
  SLUICE_ASSIGN_OR_RETURN_CTX(std::optional<std::string> target_scan,
                              ScanSql(target_.get(), options_.target_path), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(std::optional<std::string> state_scan,
                              ScanSql(state_.get(), options_.state_path), ctx);
  // 1. The batch's new events: one per (key, sequence) (a delete wins a tie), without those the
  //    flow already applied (an upsert row starting there, or a recorded delete).
  const std::string del =
      options_.spec.delete_when ? "COALESCE((" + *options_.spec.delete_when + "), false)" : "false";
  std::string events = "CREATE OR REPLACE TEMP TABLE " + std::string(kEvents) + " AS SELECT " +
                       List(cols.selected) + ", " + kSeq + ", " + kDelete +
                       " FROM (SELECT *, row_number() OVER (PARTITION BY " + List(cols.keys) +
                       ", " + kSeq + " ORDER BY " + kDelete + " DESC) AS __cdc_rank FROM (SELECT " +
                       List(cols.selected) + ", " + Q(cols.sequence_by) + " AS " + kSeq + ", " +
                       del + " AS " + kDelete + " FROM " + kInput +
                       ") AS i) AS r WHERE __cdc_rank = 1";
  if (target_scan) {
    events += " AND NOT EXISTS (SELECT 1 FROM (" + *target_scan + ") AS t WHERE " +
              KeysMatch(cols.keys, "t", "r") + " AND t." + Q(kStartAt) + " = r." + kSeq + ")";
  }
  if (state_scan) {
    events += " AND NOT EXISTS (SELECT 1 FROM (" + *state_scan + ") AS st WHERE " +
              KeysMatch(cols.keys, "st", "r") + " AND st." + kStateSeq + " = r." + kSeq + ")";
  }
  Status st = conn_->Execute(events);
  if (!st.ok()) {
    return st.WithContext(ctx + (options_.spec.delete_when
                                     ? " (APPLY AS DELETE WHEN " + *options_.spec.delete_when + ")"
                                     : std::string()));
  }
  const std::string ev(kEvents);
  SLUICE_ASSIGN_OR_RETURN_CTX(int64_t total, CountRows(conn_.get(), "SELECT count(*) FROM " + ev),
                              ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(
      int64_t deletes, CountRows(conn_.get(), "SELECT count(*) FROM " + ev + " WHERE " + kDelete),
      ctx);
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

  // 2. The history of every key with a new event, rebuilt from all its events: the new ones, the
  //    upserts the target holds and the deletes the state holds. Each upsert is a row from its
  //    sequence value to the next event's.
  std::string all = "SELECT " + List(cols.selected) + ", " + kSeq + ", " + kDelete + " FROM " + ev;
  const std::string touched = [&](const std::string& alias) {
    return "EXISTS (SELECT 1 FROM " + ev + " AS e WHERE " + KeysMatch(cols.keys, "e", alias) + ")";
  }("x");
  if (target_scan) {
    all += " UNION ALL SELECT " + List(cols.selected, "x.") + ", x." + Q(kStartAt) +
           ", false FROM (" + *target_scan + ") AS x WHERE " + touched;
  }
  if (state_scan) {
    std::string sel;
    for (const auto& c : cols.selected) {
      bool key = false;
      for (const auto& k : cols.keys) key = key || k == c;
      sel += (sel.empty() ? "" : ", ") + (key ? "x." + Q(c) : "NULL");
    }
    all += " UNION ALL SELECT " + sel + ", x." + kStateSeq + ", true FROM (" + *state_scan +
           ") AS x WHERE " + touched;
  }
  SLUICE_RETURN_NOT_OK_CTX(
      conn_->Execute("CREATE OR REPLACE TEMP TABLE " + std::string(kChanges) + " AS SELECT " +
                     List(cols.selected) + ", " + Q(kStartAt) + ", " + Q(kEndAt) +
                     " FROM (SELECT " + List(cols.selected) + ", " + kDelete + ", " + kSeq +
                     " AS " + Q(kStartAt) + ", lead(" + kSeq + ") OVER (PARTITION BY " +
                     List(cols.keys) + " ORDER BY " + kSeq + ") AS " + Q(kEndAt) + " FROM (" + all +
                     ") AS a) AS h WHERE NOT " + kDelete),
      ctx);

  // 3. Into the target: new rows inserted, existing rows whose end moved updated.
  delta::MergeSpec spec;
  spec.source_sql = kChanges;
  spec.source_alias = "s";
  spec.target_alias = "t";
  spec.on = KeysMatch(cols.keys, "t", "s") + " AND t." + Q(kStartAt) + " = s." + Q(kStartAt);
  delta::MergeClause update;
  update.kind = delta::MergeClauseKind::kMatched;
  update.condition = "t." + Q(kEndAt) + " IS DISTINCT FROM s." + Q(kEndAt);
  update.action = delta::MergeActionKind::kUpdate;
  update.assignments = {{kEndAt, "s." + Q(kEndAt)}};
  delta::MergeClause insert;
  insert.kind = delta::MergeClauseKind::kNotMatched;
  insert.action = delta::MergeActionKind::kInsert;
  for (const auto& c : cols.selected) insert.assignments.emplace_back(c, "s." + Q(c));
  insert.assignments.emplace_back(kStartAt, "s." + Q(kStartAt));
  insert.assignments.emplace_back(kEndAt, "s." + Q(kEndAt));
  spec.clauses = {update, insert};
  return MergeIntoTarget(spec, batch_id, total, ctx);
}

Status AutoCdcSink::ApplyScd2State(BatchId batch_id, const AutoCdcColumns& cols,
                                   const std::string& ctx) {
  const std::string sctx = ctx + ": the flow's state table " + options_.state_path;
  SLUICE_ASSIGN_OR_RETURN_CTX(
      engine::Batch rows,
      conn_->Query("SELECT " + List(cols.keys) + ", " + kSeq + " AS " + kStateSeq + ", true AS " +
                   kStateDeleted + " FROM " + kEvents + " WHERE " + kDelete),
      sctx);
  if (rows.num_rows() == 0) return Status::OK();
  // Only new delete events are in `rows`: an append, skipped when the txn is already there.
  delta::WriteOptions w;
  w.txn_app_id = options_.query_id;
  w.txn_version = batch_id.value();
  w.operation = "STREAMING UPDATE";
  SLUICE_RETURN_NOT_OK_CTX(state_->Write(rows, w).status(), sctx);
  return Status::OK();
}

}  // namespace sluice::sql
