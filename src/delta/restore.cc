#include "delta/restore.h"

#include <map>

#include "delta/paths.h"
#include "delta/table.h"

namespace sluice::delta {

Result<DmlResult> RestoreTable(const DmlTable& table, const RestoreTarget& target,
                               const DmlOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> txn, table.writer->StartTransaction());
  const Snapshot& current = *txn->read_snapshot();
  const std::string ctx = DmlContext("RESTORE", current);
  SLUICE_ASSIGN_OR_RETURN_CTX(auto reader,
                              DeltaTable::Open(table.fs, table.engine, current.table_root), ctx);
  Version version;
  if (target.version) {
    version = *target.version;
  } else if (target.timestamp_ms) {
    SLUICE_ASSIGN_OR_RETURN_CTX(version, reader->VersionAtTimestamp(*target.timestamp_ms), ctx);
  } else {
    return Status::InvalidArgument("RESTORE needs a version or a timestamp").WithContext(ctx);
  }
  if (version.value() < 0 || version > current.version) {
    return Status::InvalidArgument("Cannot restore table to version " + version.ToString() +
                                   ". Available versions: [0, " + current.version.ToString() + "].")
        .WithContext(ctx);
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(std::shared_ptr<const Snapshot> old, reader->SnapshotAt(version),
                              ctx);

  std::map<std::string, const AddFile*> now_files, old_files;
  for (const AddFile& f : current.files) now_files[f.path] = &f;
  for (const AddFile& f : old->files) old_files[f.path] = &f;

  std::map<std::string, int64_t> m{{"numRestoredFiles", 0},      {"numRemovedFiles", 0},
                                   {"restoredFilesSize", 0},     {"removedFilesSize", 0},
                                   {"tableSizeAfterRestore", 0}, {"numOfFilesAfterRestore", 0}};
  std::string missing;
  int num_missing = 0;
  for (const auto& [path, f] : old_files) {
    m["tableSizeAfterRestore"] += f->size;
    m["numOfFilesAfterRestore"]++;
    if (now_files.count(path)) continue;
    SLUICE_ASSIGN_OR_RETURN_CTX(std::string storage, ResolveLogPath(current.table_root, path), ctx);
    SLUICE_ASSIGN_OR_RETURN_CTX(bool exists, table.fs->Exists(storage), ctx);
    if (!exists) {
      if (num_missing++ < 10) missing += (missing.empty() ? "" : ", ") + storage;
      continue;
    }
    AddFile add = *f;
    add.data_change = true;
    txn->Add(std::move(add));
    m["numRestoredFiles"]++;
    m["restoredFilesSize"] += f->size;
  }
  if (num_missing > 0) {
    return Status::NotFound(
               "Cannot restore to version " + version.ToString() + ": " +
               std::to_string(num_missing) +
               " data files it references are missing (removed by VACUUM?): " + missing)
        .WithContext(ctx);
  }
  const int64_t now = DmlNow(options);
  for (const auto& [path, f] : now_files) {
    if (old_files.count(path)) continue;
    txn->Add(RemoveFor(*f, now, true));
    m["numRemovedFiles"]++;
    m["removedFilesSize"] += f->size;
  }
  if (!(old->metadata == current.metadata)) txn->Add(old->metadata);
  txn->ReadWholeTable();
  std::map<std::string, std::string> params{{"version", JsonString(version.ToString())}};
  if (!target.version && target.timestamp_ms)
    params["timestamp"] = JsonString(std::to_string(*target.timestamp_ms));
  return CommitDml(table, txn.get(), options, "RESTORE", params, m, /*commit_empty=*/true);
}

}  // namespace sluice::delta
