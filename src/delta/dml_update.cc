#include "delta/dml_update.h"

#include <cctype>
#include <set>

#include "common/strings.h"
#include "delta/cdc_writer.h"
#include "delta/changes.h"
#include "delta/dml_deletion_vectors.h"
#include "delta/values.h"

namespace sluice::delta {

namespace {

bool IsBlank(const std::optional<std::string>& s) {
  if (!s) return true;
  for (char c : *s) {
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

Result<DmlResult> UpdateRows(const DmlTable& table, const Assignments& assignments,
                             const std::optional<std::string>& condition,
                             const DmlOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> txn, table.writer->StartTransaction());
  const Snapshot& snap = *txn->read_snapshot();
  const std::string ctx = DmlContext("UPDATE", snap);
  if (assignments.empty())
    return Status::InvalidArgument("UPDATE needs at least one assignment").WithContext(ctx);
  const engine::Schema& schema = snap.schema.fields;
  const std::string alias = QuoteIdentifier(TargetAlias(options.target_alias));

  std::map<std::string, std::string> new_value;  // column name -> expression
  for (const auto& [col, expr] : assignments) {
    SLUICE_ASSIGN_OR_RETURN_CTX(const engine::Field* f,
                                ResolveColumn(schema, col, options.target_alias), ctx);
    if (!new_value.emplace(f->name, expr).second) {
      return Status::InvalidArgument("column '" + f->name + "' is assigned more than once")
          .WithContext(ctx);
    }
  }
  const bool has_cond = !IsBlank(condition);
  const std::string cond = has_cond ? "COALESCE((" + *condition + "), FALSE)" : "TRUE";
  std::map<std::string, std::string> params;
  params["predicate"] = JsonString(has_cond ? "[" + JsonString(*condition) + "]" : "[]");
  std::map<std::string, int64_t> m{{"numRemovedFiles", 0},     {"numAddedFiles", 0},
                                   {"numUpdatedRows", 0},      {"numCopiedRows", 0},
                                   {"numAddedChangeFiles", 0}, {"numRemovedBytes", 0},
                                   {"numAddedBytes", 0}};

  std::vector<AddFile> candidates;
  if (has_cond) {
    ScanFilter filter = ExtractPruningFilter(*condition, schema, options.target_alias);
    SLUICE_ASSIGN_OR_RETURN_CTX(candidates, PlanScanFiles(snap, filter), ctx);
    for (const AddFile& f : candidates) txn->ReadFile(f.path);
  } else {
    candidates = snap.files;
    txn->ReadWholeTable();
  }

  // With deletion vectors: the old rows are marked deleted in their files' DVs and only the
  // updated rows are written (cdc files as without DVs, as Spark writes them).
  const bool dvs = WritesDeletionVectors(snap);
  std::map<std::string, RowIndexSet> dv_rows;
  std::set<std::string> touched_paths;
  if (dvs && !candidates.empty()) {
    SLUICE_ASSIGN_OR_RETURN_CTX(std::string read_sql,
                                CandidateReadSql(table, snap, candidates, /*with_row_index=*/true),
                                ctx);
    SLUICE_ASSIGN_OR_RETURN(
        dv_rows, QueryRowIndexes(table.conn,
                                 "SELECT " + alias + "." + kFileColumn + ", " + alias + "." +
                                     kRowIndexColumn + " FROM (" + read_sql + ") AS " + alias +
                                     " WHERE " + cond,
                                 ctx));
    for (const auto& [path, rows] : dv_rows) touched_paths.insert(path);
  } else if (!candidates.empty()) {
    SLUICE_ASSIGN_OR_RETURN_CTX(std::string read_sql, CandidateReadSql(table, snap, candidates),
                                ctx);
    SLUICE_ASSIGN_OR_RETURN(engine::Batch hits,
                            QueryCtx(table.conn,
                                     "SELECT DISTINCT " + alias + "." + kFileColumn + " FROM (" +
                                         read_sql + ") AS " + alias + " WHERE " + cond,
                                     ctx));
    for (int64_t r = 0; r < hits.num_rows(); ++r)
      touched_paths.insert(hits.GetString(r, 0).value_or(""));
  }
  if (touched_paths.empty()) return CommitDml(table, txn.get(), options, "UPDATE", params, m);
  std::vector<AddFile> touched;
  for (const AddFile& f : candidates) {
    if (touched_paths.count(f.path)) touched.push_back(f);
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(std::string touched_sql, CandidateReadSql(table, snap, touched), ctx);
  const std::string from = " FROM (" + touched_sql + ") AS " + alias;

  // New values: each assigned column is CASE WHEN cond THEN CAST(expr) ELSE old END.
  std::string out_cols, post_cols;
  for (const engine::Field& f : schema) {
    if (!out_cols.empty()) {
      out_cols += ", ";
      post_cols += ", ";
    }
    const std::string old = alias + "." + QuoteIdentifier(f.name);
    auto it = new_value.find(f.name);
    if (it == new_value.end()) {
      out_cols += old;
      post_cols += old;
    } else {
      const std::string casted = "CAST((" + it->second + ") AS " + f.type.ToSql() + ")";
      out_cols += "CASE WHEN " + cond + " THEN " + casted + " ELSE " + old + " END AS " +
                  QuoteIdentifier(f.name);
      post_cols += casted + " AS " + QuoteIdentifier(f.name);
    }
  }
  SLUICE_ASSIGN_OR_RETURN(
      engine::Batch rows,
      QueryCtx(table.conn,
               dvs ? "SELECT " + post_cols + from + " WHERE " + cond : "SELECT " + out_cols + from,
               ctx));
  SLUICE_ASSIGN_OR_RETURN(
      engine::Batch counts,
      QueryCtx(table.conn, "SELECT count(*) FILTER (WHERE " + cond + "), count(*)" + from, ctx));
  SLUICE_ASSIGN_OR_RETURN(auto updated, counts.GetInt64(0, 0));
  SLUICE_ASSIGN_OR_RETURN(auto total, counts.GetInt64(0, 1));
  SLUICE_ASSIGN_OR_RETURN_CTX(std::vector<AddFile> adds,
                              WriteRowsInFiles(table, txn.get(), rows, RowsPerFile(touched)), ctx);
  if (ChangeDataFeedEnabled(snap)) {
    const std::string ct = std::string(" AS ") + kChangeTypeColumn;
    SLUICE_ASSIGN_OR_RETURN(
        engine::Batch changes,
        QueryCtx(table.conn,
                 "SELECT " + ColumnList(schema, alias) + ", 'update_preimage'" + ct + from +
                     " WHERE " + cond + " UNION ALL SELECT " + post_cols + ", 'update_postimage'" +
                     ct + from + " WHERE " + cond,
                 ctx));
    auto cdc =
        WriteCdcFiles(table.conn, table.fs.get(), snap, changes, table.writer->sync_data_files());
    if (!cdc.ok()) return cdc.status().WithContext(ctx);
    m["numAddedChangeFiles"] = static_cast<int64_t>(cdc->size());
    for (AddCdcFile& c : *cdc) txn->Add(std::move(c));
  }
  if (dvs) {
    SLUICE_ASSIGN_OR_RETURN(
        DeletionVectorChanges c,
        MarkDeletedRows(table, txn.get(), snap, touched, dv_rows, DmlNow(options)));
    m["numRemovedFiles"] = c.files_removed;
    m["numRemovedBytes"] = c.bytes_removed;
    m["numDeletionVectorsAdded"] = c.dvs_added;
    m["numDeletionVectorsUpdated"] = c.dvs_updated;
    m["numDeletionVectorsRemoved"] = c.dvs_removed;
  } else {
    for (const AddFile& f : touched) {
      txn->Add(RemoveFor(f, DmlNow(options), true));
      m["numRemovedBytes"] += f.size;
    }
    m["numRemovedFiles"] = static_cast<int64_t>(touched.size());
  }
  m["numAddedFiles"] = static_cast<int64_t>(adds.size());
  for (AddFile& a : adds) {
    m["numAddedBytes"] += a.size;
    txn->Add(std::move(a));
  }
  m["numUpdatedRows"] = updated.value_or(0);
  m["numCopiedRows"] = dvs ? 0 : total.value_or(0) - updated.value_or(0);
  return CommitDml(table, txn.get(), options, "UPDATE", params, m);
}

}  // namespace sluice::delta
