#include "delta/dml_deletion_vectors.h"

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "delta/deletion_vector.h"
#include "delta/deletion_vector_writer.h"
#include "fs/crash_point.h"

namespace sluice::delta {

namespace {

// The add's stats with tightBounds false (min/max stay bounds; the counts are of the whole file).
std::optional<std::string> LooseStats(const std::optional<std::string>& stats) {
  if (!stats) return stats;
  auto j = nlohmann::ordered_json::parse(*stats, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return stats;
  j["tightBounds"] = false;
  return j.dump();
}

}  // namespace

bool WritesDeletionVectors(const Snapshot& snapshot) {
  const auto& wf = snapshot.protocol.writer_features;
  return wf && std::find(wf->begin(), wf->end(), "deletionVectors") != wf->end() &&
         snapshot.metadata.ConfigIsTrue("delta.enableDeletionVectors");
}

Result<std::map<std::string, RowIndexSet>> QueryRowIndexes(engine::Connection* conn,
                                                           const std::string& sql,
                                                           const std::string& ctx) {
  // Consecutive indexes become one range in the engine (gaps and islands), and each file's
  // ranges one text "b-e,b-e,..." (end exclusive): one row per file, because reading a batch
  // cell by cell costs a chunk seek per cell.
  const std::string ranges =
      "SELECT __p, string_agg(__b || '-' || __e, ',' ORDER BY __b) FROM (SELECT __p, min(__i) AS "
      "__b, max(__i) + 1 AS __e FROM (SELECT __p, __i, __i - row_number() OVER (PARTITION BY __p "
      "ORDER BY __i) AS __g FROM (" +
      sql + ") AS __x(__p, __i)) GROUP BY __p, __g) GROUP BY __p";
  SLUICE_ASSIGN_OR_RETURN(engine::Batch b, QueryCtx(conn, ranges, ctx));
  std::map<std::string, RowIndexSet> out;
  for (int64_t r = 0; r < b.num_rows(); ++r) {
    std::optional<std::string> path = b.GetString(r, 0);
    std::optional<std::string> text = b.GetString(r, 1);
    if (!path || !text) return Status::Internal(ctx + ": a deleted row without its file");
    RowIndexSet& set = out[*path];
    const char* p = text->c_str();
    while (*p != '\0') {
      char* end = nullptr;
      const unsigned long long begin = std::strtoull(p, &end, 10);
      if (end == p || *end != '-') return Status::Internal(ctx + ": bad range text " + *text);
      p = end + 1;
      const unsigned long long stop = std::strtoull(p, &end, 10);
      if (end == p || stop <= begin) return Status::Internal(ctx + ": bad range text " + *text);
      set.Append(begin, stop);
      p = *end == ',' ? end + 1 : end;
    }
  }
  return out;
}

Result<DeletionVectorChanges> MarkDeletedRows(const DmlTable& table, Transaction* txn,
                                              const Snapshot& snapshot,
                                              const std::vector<AddFile>& files,
                                              const std::map<std::string, RowIndexSet>& deleted,
                                              int64_t now_ms) {
  const std::string ctx = "writing deletion vectors of Delta table " + snapshot.table_root;
  std::map<std::string, const AddFile*> by_path;
  for (const AddFile& f : files) by_path[f.path] = &f;
  DeletionVectorLoader loader(table.fs.get(), snapshot.table_root);
  DeletionVectorFileWriter writer(table.fs.get(), snapshot.table_root);
  DeletionVectorChanges changes;
  std::vector<AddFile> adds;
  for (const auto& [path, rows] : deleted) {
    auto it = by_path.find(path);
    if (it == by_path.end()) {
      return Status::Internal(ctx + ": rows deleted in '" + path + "', not a file it read");
    }
    const AddFile& old = *it->second;
    RowIndexSet all = rows;
    if (old.deletion_vector) {
      SLUICE_ASSIGN_OR_RETURN_CTX(std::shared_ptr<const RowIndexSet> before,
                                  loader.Load(*old.deletion_vector, old.path), ctx);
      all = Union(*before, rows);
    }
    const auto newly = static_cast<int64_t>(all.Cardinality()) -
                       (old.deletion_vector ? old.deletion_vector->cardinality : 0);
    if (newly <= 0) continue;  // nothing new (cannot happen for rows read live)
    changes.rows_deleted += newly;
    txn->Add(RemoveFor(old, now_ms, /*data_change=*/true));
    if (old.deletion_vector) ++changes.dvs_removed;
    std::optional<int64_t> records = NumRecords(old);
    if (records && static_cast<int64_t>(all.Cardinality()) >= *records) {
      ++changes.files_removed;  // every row deleted: the file goes, as in Delta
      changes.bytes_removed += old.size;
      changes.removed_files.push_back(old.path);
      continue;
    }
    AddFile add = old;
    SLUICE_ASSIGN_OR_RETURN_CTX(add.deletion_vector, writer.Add(all), ctx + ", file " + old.path);
    add.data_change = true;
    add.stats = LooseStats(old.stats);
    ++changes.dvs_added;
    if (old.deletion_vector) ++changes.dvs_updated;
    adds.push_back(std::move(add));
  }
  if (!writer.empty()) {
    SLUICE_RETURN_NOT_OK(writer.Write(table.writer->sync_data_files()));
    txn->RecordWrittenFile(writer.path());
    SLUICE_RETURN_NOT_OK(fs::CrashPoint(*table.fs, "delta.after_deletion_vector_write", ctx));
  }
  for (AddFile& a : adds) txn->Add(std::move(a));
  return changes;
}

}  // namespace sluice::delta
