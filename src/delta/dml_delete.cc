#include "delta/dml_delete.h"

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

int64_t SumSize(const std::vector<AddFile>& files) {
  int64_t n = 0;
  for (const AddFile& f : files) n += f.size;
  return n;
}

}  // namespace

Result<DmlResult> DeleteRows(const DmlTable& table, const std::optional<std::string>& condition,
                             const DmlOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> txn, table.writer->StartTransaction());
  const Snapshot& snap = *txn->read_snapshot();
  const std::string ctx = DmlContext("DELETE", snap);
  const int64_t now = DmlNow(options);
  const std::string alias = QuoteIdentifier(TargetAlias(options.target_alias));
  std::map<std::string, std::string> params;
  params["predicate"] = JsonString(IsBlank(condition) ? "[]" : "[" + JsonString(*condition) + "]");

  std::map<std::string, int64_t> m{{"numRemovedFiles", 0},     {"numAddedFiles", 0},
                                   {"numDeletedRows", 0},      {"numCopiedRows", 0},
                                   {"numAddedChangeFiles", 0}, {"numRemovedBytes", 0},
                                   {"numAddedBytes", 0}};

  // Whole files removed without rewriting (all rows deleted).
  auto remove_whole = [&](const std::vector<AddFile>& files) -> Status {
    for (const AddFile& f : files) {
      txn->Add(RemoveFor(f, now, true));
      m["numRemovedFiles"]++;
      m["numRemovedBytes"] += f.size;
      auto n = LiveRows(f);
      if (n) {
        m["numDeletedRows"] += *n;
      } else {
        SLUICE_ASSIGN_OR_RETURN(std::string sql, CandidateReadSql(table, snap, {f}));
        SLUICE_ASSIGN_OR_RETURN(engine::Batch c,
                                QueryCtx(table.conn, "SELECT count(*) FROM (" + sql + ")", ctx));
        SLUICE_ASSIGN_OR_RETURN(auto cnt, c.GetInt64(0, 0));
        m["numDeletedRows"] += cnt.value_or(0);
      }
    }
    return Status::OK();
  };

  if (IsBlank(condition)) {
    txn->ReadWholeTable();
    SLUICE_RETURN_NOT_OK_CTX(remove_whole(snap.files), ctx);
    return CommitDml(table, txn.get(), options, "DELETE", params, m);
  }
  const std::string cond = "(" + *condition + ")";

  ScanFilter filter = ExtractPruningFilter(*condition, snap.schema.fields, options.target_alias);
  SLUICE_ASSIGN_OR_RETURN_CTX(std::vector<AddFile> candidates, PlanScanFiles(snap, filter), ctx);
  for (const AddFile& f : candidates) txn->ReadFile(f.path);

  // A condition on partition columns only removes whole files.
  if (!snap.metadata.partition_columns.empty()) {
    SLUICE_ASSIGN_OR_RETURN_CTX(
        auto whole,
        EvaluateOnPartitions(table.conn, snap, candidates, *condition, options.target_alias), ctx);
    if (whole) {
      std::vector<AddFile> drop;
      for (size_t i = 0; i < candidates.size(); ++i) {
        if ((*whole)[i]) drop.push_back(candidates[i]);
      }
      SLUICE_RETURN_NOT_OK_CTX(remove_whole(drop), ctx);
      return CommitDml(table, txn.get(), options, "DELETE", params, m);
    }
  }

  // With deletion vectors: the deleted rows are marked in their files' DVs, nothing is
  // rewritten and no cdc file is written (the feed derives the deleted rows from the DVs, as
  // Spark's DELETE leaves it).
  if (WritesDeletionVectors(snap)) {
    for (const char* k :
         {"numDeletionVectorsAdded", "numDeletionVectorsUpdated", "numDeletionVectorsRemoved"}) {
      m[k] = 0;
    }
    if (candidates.empty()) return CommitDml(table, txn.get(), options, "DELETE", params, m);
    SLUICE_ASSIGN_OR_RETURN_CTX(std::string read_sql,
                                CandidateReadSql(table, snap, candidates, /*with_row_index=*/true),
                                ctx);
    SLUICE_ASSIGN_OR_RETURN(
        auto deleted, QueryRowIndexes(table.conn,
                                      "SELECT " + alias + "." + kFileColumn + ", " + alias + "." +
                                          kRowIndexColumn + " FROM (" + read_sql + ") AS " + alias +
                                          " WHERE COALESCE(" + cond + ", FALSE)",
                                      ctx));
    if (deleted.empty()) return CommitDml(table, txn.get(), options, "DELETE", params, m);
    SLUICE_ASSIGN_OR_RETURN(DeletionVectorChanges c,
                            MarkDeletedRows(table, txn.get(), snap, candidates, deleted, now));
    m["numDeletedRows"] = c.rows_deleted;
    m["numRemovedFiles"] = c.files_removed;
    m["numRemovedBytes"] = c.bytes_removed;
    m["numDeletionVectorsAdded"] = c.dvs_added;
    m["numDeletionVectorsUpdated"] = c.dvs_updated;
    m["numDeletionVectorsRemoved"] = c.dvs_removed;
    return CommitDml(table, txn.get(), options, "DELETE", params, m);
  }

  // Which candidate files hold rows to delete?
  std::set<std::string> touched_paths;
  if (!candidates.empty()) {
    SLUICE_ASSIGN_OR_RETURN_CTX(std::string read_sql, CandidateReadSql(table, snap, candidates),
                                ctx);
    SLUICE_ASSIGN_OR_RETURN(
        engine::Batch hits,
        QueryCtx(table.conn,
                 "SELECT " + alias + "." + kFileColumn + ", count(*) FROM (" + read_sql + ") AS " +
                     alias + " WHERE " + cond + " GROUP BY 1",
                 ctx));
    for (int64_t r = 0; r < hits.num_rows(); ++r)
      touched_paths.insert(hits.GetString(r, 0).value_or(""));
  }
  if (touched_paths.empty()) return CommitDml(table, txn.get(), options, "DELETE", params, m);
  std::vector<AddFile> touched;
  for (const AddFile& f : candidates) {
    if (touched_paths.count(f.path)) touched.push_back(f);
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(std::string touched_sql, CandidateReadSql(table, snap, touched), ctx);
  const std::string from = " FROM (" + touched_sql + ") AS " + alias;
  const std::string cols = ColumnList(snap.schema.fields, alias);

  SLUICE_ASSIGN_OR_RETURN(
      engine::Batch kept,
      QueryCtx(table.conn, "SELECT " + cols + from + " WHERE NOT COALESCE(" + cond + ", FALSE)",
               ctx));
  SLUICE_ASSIGN_OR_RETURN(engine::Batch deleted,
                          QueryCtx(table.conn,
                                   "SELECT " + cols + ", 'delete' AS " + kChangeTypeColumn + from +
                                       " WHERE COALESCE(" + cond + ", FALSE)",
                                   ctx));
  SLUICE_ASSIGN_OR_RETURN_CTX(std::vector<AddFile> adds,
                              WriteRowsInFiles(table, txn.get(), kept, RowsPerFile(touched)), ctx);
  if (ChangeDataFeedEnabled(snap)) {
    auto cdc =
        WriteCdcFiles(table.conn, table.fs.get(), snap, deleted, table.writer->sync_data_files());
    if (!cdc.ok()) return cdc.status().WithContext(ctx);
    for (AddCdcFile& c : *cdc) txn->Add(std::move(c));
    m["numAddedChangeFiles"] = static_cast<int64_t>(cdc->size());
  }
  for (const AddFile& f : touched) txn->Add(RemoveFor(f, now, true));
  for (AddFile& a : adds) {
    m["numAddedBytes"] += a.size;
    txn->Add(std::move(a));
  }
  m["numRemovedFiles"] = static_cast<int64_t>(touched.size());
  m["numRemovedBytes"] = SumSize(touched);
  m["numAddedFiles"] = static_cast<int64_t>(adds.size());
  m["numDeletedRows"] = deleted.num_rows();
  m["numCopiedRows"] = kept.num_rows();
  return CommitDml(table, txn.get(), options, "DELETE", params, m);
}

}  // namespace sluice::delta
