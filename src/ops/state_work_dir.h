// The local working directories of the RocksDB state stores of stateful operators.
//
// A RocksDB store works in a local directory (a cache of the state files in the checkpoint,
// removed when the operator closes). It lives under the checkpoint's own temporary area,
// <checkpoint>/_work/<kind>-<random>/, so that a killed run's directory (about 17 MB) is not left
// in $TMPDIR where nothing would reclaim it: the next owner of the checkpoint lock removes
// everything under <checkpoint>/_work/ before any operator opens (stream/checkpoint_reclaim.h),
// and deleting a checkpoint deletes it too. Without a checkpoint root (unit tests) the directory
// is made under $TMPDIR (default /tmp). A checkpoint on object storage (s3://) has its _work in
// the local cache directory of its path (fs/local_cache.h), never in a local "s3:" directory.
//
// Thread-safe (mkdtemp).
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice::ops {

// The name of the checkpoint's temporary area: <checkpoint>/_work.
inline constexpr std::string_view kCheckpointWorkDirName = "_work";

// <checkpoint_root>/_work; <LocalCacheDirFor(checkpoint_root)>/_work for s3://.
std::string CheckpointWorkDir(std::string_view checkpoint_root);

// Creates a fresh <checkpoint_root>/_work/<kind>-XXXXXX (the parents as needed) and returns its
// path; IOError naming it otherwise.
Result<std::string> CreateStateWorkDir(std::string_view checkpoint_root, std::string_view kind);

}  // namespace sluice::ops
