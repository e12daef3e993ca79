#include "delta/log_cleanup.h"

#include <map>

#include "delta/log_segment.h"

namespace sluice::delta {

Result<CleanupResult> CleanupExpiredLogs(fs::FileSystem* fs, const std::string& table_root,
                                         int64_t retention_ms, int64_t now_ms) {
  const std::string ctx = "cleaning up the Delta log of " + table_root;
  SLUICE_ASSIGN_OR_RETURN_CTX(LogListing listing, ListLog(fs, table_root), ctx);
  CleanupResult result;
  const int64_t cutoff_ms = now_ms - retention_ms;
  std::optional<Version> cutoff;
  for (const auto& [v, f] : listing.commits) {
    if (f.info.mtime_ms < cutoff_ms) cutoff = v;
  }
  if (!cutoff) return result;
  std::optional<Version> start;
  for (const auto& [v, cp] : listing.checkpoints) {
    if (v <= *cutoff) start = v;
  }
  if (!start) return result;
  result.log_start = start;
  SLUICE_ASSIGN_OR_RETURN_CTX(auto entries, fs->List(listing.log_dir), ctx);
  for (const fs::FileInfo& e : entries) {
    if (e.is_directory) continue;
    std::string name = fs::BaseName(e.path);
    std::optional<Version> version;
    if (auto parsed = ParseLogFileName(name)) {
      version = parsed->version;
    } else if (name.size() == 24 && name.compare(20, 4, ".crc") == 0 &&
               name.find_first_not_of("0123456789") == 20) {
      version = Version(std::stoll(name.substr(0, 20)));
    }
    if (!version || *version >= *start) continue;
    Status st = fs->DeleteFile(e.path);
    if (!st.ok() && !st.IsNotFound()) return st.WithContext(ctx);
    if (st.ok()) ++result.files_deleted;
  }
  return result;
}

}  // namespace sluice::delta
