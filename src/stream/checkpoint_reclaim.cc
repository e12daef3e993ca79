#include "stream/checkpoint_reclaim.h"

#include "ops/state_work_dir.h"
#include "stream/checkpoint_layout.h"

namespace sluice::stream {
namespace {

Status RemoveTempFiles(fs::FileSystem& fs, const std::string& dir, bool is_root,
                       ReclaimedLeftovers* out) {
  Result<std::vector<fs::FileInfo>> entries = fs.List(dir);
  if (entries.status().IsNotFound()) return Status::OK();
  SLUICE_RETURN_NOT_OK_CTX(entries.status(), "listing " + dir);
  if (!is_root) {
    for (const fs::FileInfo& e : *entries) {
      if (!e.is_directory && fs::BaseName(e.path) == kLockFileName) return Status::OK();
    }
  }
  for (const fs::FileInfo& e : *entries) {
    const std::string name = fs::BaseName(e.path);
    if (e.is_directory) {
      // At the root only the checkpoint's own logs: a flow's checkpoint (flows/<name>) may be
      // starting at this moment, writing its metadata before it takes its own lock.
      if (is_root && name != kOffsetsDirName && name != kCommitsDirName &&
          name != kSourcesDirName && name != kStateDirName && name != "progress") {
        continue;
      }
      SLUICE_RETURN_NOT_OK(RemoveTempFiles(fs, e.path, false, out));
    } else if (fs::IsTempFileName(name)) {
      Status st = fs.DeleteFile(e.path);
      if (!st.ok() && !st.IsNotFound()) return st.WithContext("removing a stale temporary file");
      ++out->temp_files;
    }
  }
  return Status::OK();
}

}  // namespace

Result<ReclaimedLeftovers> ReclaimCheckpointLeftovers(fs::FileSystem& fs, const std::string& root) {
  ReclaimedLeftovers out;
  const std::string work = ops::CheckpointWorkDir(root);
  // On object storage the working directories are in a local cache (ops/state_work_dir.h).
  fs::FileSystem& work_fs = fs::PathScheme(root).empty() ? fs : *fs::LocalFileSystem();
  Result<std::vector<fs::FileInfo>> entries = work_fs.List(work);
  if (!entries.status().IsNotFound()) {
    SLUICE_RETURN_NOT_OK_CTX(entries.status(), "listing " + work);
    for (const fs::FileInfo& e : *entries) {
      Status st = e.is_directory ? work_fs.DeleteRecursive(e.path) : work_fs.DeleteFile(e.path);
      if (!st.ok() && !st.IsNotFound()) {
        return st.WithContext("removing a killed run's state working directory");
      }
      ++out.work_dirs;
    }
  }
  SLUICE_RETURN_NOT_OK(RemoveTempFiles(fs, root, true, &out));
  return out;
}

}  // namespace sluice::stream
