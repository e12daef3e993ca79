// What killed runs leave in a checkpoint, removed by the next owner of its lock.
//
// A run killed with SIGKILL leaves (1) the RocksDB working directories of its stateful operators
// under <checkpoint>/_work/ (ops/state_work_dir.h), about 17 MB each, and (2) temporary files of
// writes it had not finished (".<name>.<random>.tmp", fs::IsTempFileName) in offsets/, commits/,
// sources/, state/ and the root. Holding the checkpoint lock means no other process writes this
// checkpoint, so none of these can belong to a live writer: MicroBatchExecution calls
// ReclaimCheckpointLeftovers right after acquiring the lock, before anything is read.
//
// Only the checkpoint's own directories are searched (offsets/, commits/, sources/, state/,
// progress/, and the root's files): a flow's checkpoint inside a table's (flows/<name>) has its
// own owner, and may be writing its metadata before it takes its lock. A directory below those
// that holds a `lock` file is another checkpoint and is not entered either.
//
// Thread safety: call with the checkpoint lock held; stateless.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "fs/file_system.h"

namespace sluice::stream {

struct ReclaimedLeftovers {
  int64_t work_dirs = 0;   // entries removed under <checkpoint>/_work
  int64_t temp_files = 0;  // temporary files removed
};

Result<ReclaimedLeftovers> ReclaimCheckpointLeftovers(fs::FileSystem& fs, const std::string& root);

}  // namespace sluice::stream
