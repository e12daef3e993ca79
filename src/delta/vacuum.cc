#include "delta/vacuum.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "delta/checkpoint_writer.h"
#include "delta/deletion_vector.h"
#include "delta/paths.h"
#include "delta/write_util.h"

namespace sluice::delta {

namespace {

std::string FormatHours(double hours) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%g", hours);
  return buf;
}

// True when `rel` (relative to the table root) must never be vacuumed.
bool Protected(const std::string& rel) {
  size_t start = 0;
  bool first = true;
  while (start <= rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string::npos) end = rel.size();
    std::string comp = rel.substr(start, end - start);
    if (!comp.empty() && comp[0] == '.') return true;
    if (first && !comp.empty() && comp[0] == '_' && comp != "_change_data") return true;
    first = false;
    start = end + 1;
  }
  return false;
}

}  // namespace

Result<VacuumResult> Vacuum(const DmlTable& table, const VacuumOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> probe, table.writer->StartTransaction());
  const Snapshot& snap = *probe->read_snapshot();
  const std::string ctx = DmlContext("VACUUM", snap);
  SLUICE_ASSIGN_OR_RETURN_CTX(int64_t default_ms, DeletedFileRetentionMs(snap.metadata), ctx);
  int64_t retention_ms = default_ms;
  if (options.retain_hours) {
    if (!(*options.retain_hours >= 0) || std::isinf(*options.retain_hours)) {
      return Status::InvalidArgument("Retention for Vacuum can't be less than 0 hours.")
          .WithContext(ctx);
    }
    retention_ms = static_cast<int64_t>(std::llround(*options.retain_hours * 3600.0 * 1000.0));
    if (options.retention_duration_check && retention_ms < default_ms) {
      return Status::InvalidArgument(
                 "requirement failed: Are you sure you would like to vacuum files with such a low "
                 "retention "
                 "period? If you have writers that are currently writing to this table, there is a "
                 "risk that you "
                 "may corrupt the state of your Delta table. If you are certain that there are no "
                 "operations being "
                 "performed on this table, such as insert/upsert/delete/optimize, then you may "
                 "turn off this "
                 "check by setting: SET sluice.delta.retentionDurationCheck = false. If you are "
                 "not sure, please "
                 "use a value not less than \"" +
                 FormatHours(static_cast<double>(default_ms) / 3600000.0) + " hours\".")
          .WithContext(ctx);
    }
  }
  const int64_t now = options.now_ms ? options.now_ms() : NowMillis();
  const int64_t cutoff = now - retention_ms;

  std::set<std::string> keep;  // storage paths
  // The DV file of an entry is kept with its data file (inline DVs have none).
  auto keep_dv = [&](const std::optional<DeletionVector>& dv) -> Status {
    if (!dv || dv->storage_type == "i") return Status::OK();
    SLUICE_ASSIGN_OR_RETURN(std::string p, DeletionVectorFilePath(snap.table_root, *dv));
    keep.insert(p);
    return Status::OK();
  };
  for (const AddFile& f : snap.files) {
    SLUICE_ASSIGN_OR_RETURN_CTX(std::string p, ResolveLogPath(snap.table_root, f.path), ctx);
    keep.insert(p);
    SLUICE_RETURN_NOT_OK_CTX(keep_dv(f.deletion_vector), ctx);
  }
  for (const RemoveFile& r : snap.tombstones) {
    if (r.deletion_timestamp.value_or(0) > cutoff) {
      SLUICE_ASSIGN_OR_RETURN_CTX(std::string p, ResolveLogPath(snap.table_root, r.path), ctx);
      keep.insert(p);
      SLUICE_RETURN_NOT_OK_CTX(keep_dv(r.deletion_vector), ctx);
    }
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(std::vector<fs::FileInfo> all,
                              table.fs->ListRecursive(snap.table_root), ctx);
  std::string root = snap.table_root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  VacuumResult result;
  for (const fs::FileInfo& f : all) {
    if (f.is_directory || f.path.size() <= root.size() + 1 ||
        f.path.compare(0, root.size(), root) != 0)
      continue;
    const std::string rel = f.path.substr(root.size() + 1);
    if (Protected(rel)) continue;
    if (keep.count(f.path) || keep.count(fs::JoinPath(snap.table_root, rel))) continue;
    if (f.mtime_ms >= cutoff) continue;
    result.files.push_back(f.path);
    result.bytes += f.size;
  }
  std::sort(result.files.begin(), result.files.end());
  if (options.dry_run) return result;

  DmlOptions dml;
  dml.now_ms = options.now_ms;
  std::map<std::string, std::string> start_params{
      {"retentionCheckEnabled", options.retention_duration_check ? "true" : "false"},
      {"defaultRetentionMillis", std::to_string(default_ms)}};
  if (options.retain_hours) start_params["specifiedRetentionMillis"] = std::to_string(retention_ms);
  SLUICE_ASSIGN_OR_RETURN(
      DmlResult started, CommitDml(table, probe.get(), dml, "VACUUM START", start_params,
                                   {{"numFilesToDelete", static_cast<int64_t>(result.files.size())},
                                    {"sizeOfDataToDelete", result.bytes}},
                                   /*commit_empty=*/true));
  result.start_version = started.version;
  int64_t deleted = 0;
  Status first_error;
  for (const std::string& p : result.files) {
    Status st = table.fs->DeleteFile(p);
    if (st.ok() || st.IsNotFound()) {
      ++deleted;
    } else if (first_error.ok()) {
      first_error = st;
    }
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> end_txn, table.writer->StartTransaction());
  SLUICE_ASSIGN_OR_RETURN(
      DmlResult ended,
      CommitDml(table, end_txn.get(), dml, "VACUUM END",
                {{"status", JsonString(first_error.ok() ? "COMPLETED" : "FAILED")}},
                {{"numDeletedFiles", deleted}, {"numVacuumedDirectories", 0}},
                /*commit_empty=*/true));
  result.end_version = ended.version;
  SLUICE_RETURN_NOT_OK_CTX(first_error, ctx);
  return result;
}

}  // namespace sluice::delta
