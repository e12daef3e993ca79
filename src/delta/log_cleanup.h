// Metadata cleanup (PROTOCOL.md "Metadata Cleanup"; Spark's MetadataCleanup): deletes log
// files that no snapshot within delta.logRetentionDuration (default 30 days) needs.
//
// Rule: the cutoff is the newest commit whose file is older than now - retention. The newest
// checkpoint at or before the cutoff version is the new start of the log; every commit,
// checkpoint (classic or multi-part) and .crc file of a version strictly before it is deleted.
// The start checkpoint and its commit stay, so the log stays readable from that checkpoint and
// every version from it on can still be recreated. Without such a checkpoint nothing is
// deleted. `_last_checkpoint`, temporary files and unknown files are never touched.
//
// Thread safety: safe to run concurrently with writers and readers of the table (it only
// deletes files that no snapshot at or after the start checkpoint reads).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/ids.h"
#include "common/result.h"
#include "fs/file_system.h"

namespace sluice::delta {

struct CleanupResult {
  int64_t files_deleted = 0;
  std::optional<Version> log_start;  // the checkpoint the log now starts at, when any was kept
};

// Deletes expired log files of the table at `table_root` (see above).
Result<CleanupResult> CleanupExpiredLogs(fs::FileSystem* fs, const std::string& table_root,
                                         int64_t retention_ms, int64_t now_ms);

}  // namespace sluice::delta
