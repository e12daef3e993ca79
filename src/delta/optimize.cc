#include "delta/optimize.h"

#include <algorithm>
#include <limits>
#include <map>
#include <vector>

#include "delta/write_util.h"

namespace sluice::delta {

Result<DmlResult> Optimize(const DmlTable& table, const OptimizeOptions& optimize,
                           const DmlOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> txn, table.writer->StartTransaction());
  const Snapshot& snap = *txn->read_snapshot();
  const std::string operation = optimize.purge ? "REORG" : "OPTIMIZE";
  const std::string ctx = DmlContext(operation, snap);
  if (optimize.target_file_size <= 0) {
    return Status::InvalidArgument("OPTIMIZE target file size must be positive").WithContext(ctx);
  }
  std::vector<AddFile> files = snap.files;
  if (optimize.partition_predicate) {
    std::string bind_error;
    SLUICE_ASSIGN_OR_RETURN_CTX(
        auto selected,
        EvaluateOnPartitions(table.conn, snap, files, *optimize.partition_predicate,
                             options.target_alias, &bind_error),
        ctx);
    if (!selected) {
      std::string parts;
      for (const std::string& p : snap.metadata.partition_columns)
        parts += (parts.empty() ? "" : ", ") + p;
      return Status::InvalidArgument(
                 "Predicate references non-partition column: " + *optimize.partition_predicate +
                 ". Only the partition columns may be referenced: [" + parts + "] (" + bind_error +
                 ")")
          .WithContext(ctx);
    }
    std::vector<AddFile> kept;
    for (size_t i = 0; i < files.size(); ++i) {
      if ((*selected)[i]) kept.push_back(files[i]);
    }
    files = std::move(kept);
  }
  const int64_t considered = static_cast<int64_t>(files.size());

  // Small files (REORG: files with rows deleted by their DV) per partition (keyed by the log's
  // partition values), smallest first.
  std::map<PartitionValues, std::vector<AddFile>> by_partition;
  for (const AddFile& f : files) {
    const bool has_dv = f.deletion_vector.has_value() && f.deletion_vector->cardinality > 0;
    bool pick = optimize.purge
                    ? has_dv
                    : f.size < optimize.min_file_size.value_or(optimize.target_file_size);
    if (!optimize.purge && !pick && has_dv) {
      // Delta's maxDeletedRowsRatio: a file of any size whose DV deletes at least this share of
      // its rows (numRecords of its stats) is compacted too.
      std::optional<int64_t> records = NumRecords(f);
      pick = records && *records > 0 &&
             static_cast<double>(f.deletion_vector->cardinality) >=
                 optimize.max_deleted_rows_ratio * static_cast<double>(*records);
    }
    if (pick) by_partition[f.partition_values].push_back(f);
  }
  std::vector<std::vector<AddFile>> bins;
  for (auto& [pv, list] : by_partition) {
    std::stable_sort(list.begin(), list.end(),
                     [](const AddFile& a, const AddFile& b) { return a.size < b.size; });
    std::vector<AddFile> bin;
    int64_t bin_size = 0;
    for (const AddFile& f : list) {
      if (!bin.empty() && bin_size + f.size > optimize.target_file_size) {
        bins.push_back(std::move(bin));
        bin.clear();
        bin_size = 0;
      }
      bin.push_back(f);
      bin_size += f.size;
    }
    if (!bin.empty()) bins.push_back(std::move(bin));
  }
  const size_t min_bin = optimize.purge ? 1 : 2;
  bins.erase(
      std::remove_if(bins.begin(), bins.end(), [&](const auto& b) { return b.size() < min_bin; }),
      bins.end());

  std::map<std::string, std::string> params{
      {"predicate", JsonString(optimize.partition_predicate
                                   ? "[" + JsonString(*optimize.partition_predicate) + "]"
                                   : "[]")},
      {"zOrderBy", JsonString("[]")}};
  if (optimize.purge) params = {{"predicate", params["predicate"]}, {"applyPurge", "true"}};
  std::map<std::string, int64_t> m{{"numAddedFiles", 0},
                                   {"numRemovedFiles", 0},
                                   {"numAddedBytes", 0},
                                   {"numRemovedBytes", 0},
                                   {"numBatches", 0},
                                   {"totalConsideredFiles", considered},
                                   {"totalFilesSkipped", considered},
                                   {"minFileSize", 0},
                                   {"maxFileSize", 0}};
  if (bins.empty()) return CommitDml(table, txn.get(), options, operation, params, m);

  const int64_t now = DmlNow(options);
  int64_t min_size = std::numeric_limits<int64_t>::max(), max_size = 0;
  std::vector<int64_t> added_sizes;
  for (const auto& bin : bins) {
    SLUICE_ASSIGN_OR_RETURN_CTX(std::string sql, CandidateReadSql(table, snap, bin), ctx);
    SLUICE_ASSIGN_OR_RETURN(
        engine::Batch rows,
        QueryCtx(table.conn, "SELECT " + ColumnList(snap.schema.fields) + " FROM (" + sql + ")",
                 ctx));
    SLUICE_ASSIGN_OR_RETURN_CTX(std::vector<AddFile> adds,
                                table.writer->WriteFiles(txn.get(), rows), ctx);
    for (const AddFile& f : bin) {
      if (f.deletion_vector) m["numDeletionVectorsRemoved"]++;  // Spark's, when some are
      txn->ReadFile(f.path);
      txn->Add(RemoveFor(f, now, false));
      m["numRemovedFiles"]++;
      m["numRemovedBytes"] += f.size;
    }
    for (AddFile& a : adds) {
      a.data_change = false;
      m["numAddedFiles"]++;
      m["numAddedBytes"] += a.size;
      min_size = std::min(min_size, a.size);
      max_size = std::max(max_size, a.size);
      added_sizes.push_back(a.size);
      txn->Add(std::move(a));
    }
    m["numBatches"]++;
  }
  m["totalFilesSkipped"] = considered - m["numRemovedFiles"];
  m["minFileSize"] = m["numAddedFiles"] > 0 ? min_size : 0;
  m["maxFileSize"] = max_size;
  if (optimize.purge) {
    // REORG's commitInfo carries Spark 4.2 / Delta 4.4's metrics of it: no bin counts, the
    // quartiles of the added files' sizes (the sorted sizes at index floor(q * (n - 1))).
    std::sort(added_sizes.begin(), added_sizes.end());
    auto quartile = [&](double q) {
      if (added_sizes.empty()) return int64_t{0};
      return added_sizes[static_cast<size_t>(q * static_cast<double>(added_sizes.size() - 1))];
    };
    m = {{"numAddedFiles", m["numAddedFiles"]},
         {"numRemovedFiles", m["numRemovedFiles"]},
         {"numAddedBytes", m["numAddedBytes"]},
         {"numRemovedBytes", m["numRemovedBytes"]},
         {"numDeletionVectorsRemoved", m["numDeletionVectorsRemoved"]},
         {"minFileSize", m["minFileSize"]},
         {"p25FileSize", quartile(0.25)},
         {"p50FileSize", quartile(0.5)},
         {"p75FileSize", quartile(0.75)},
         {"maxFileSize", m["maxFileSize"]}};
  }
  return CommitDml(table, txn.get(), options, operation, params, m);
}

}  // namespace sluice::delta
