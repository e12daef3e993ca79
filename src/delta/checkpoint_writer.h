// Writing classic single-file Delta checkpoints (PROTOCOL.md "Checkpoints") and
// `_last_checkpoint`.
//
// A checkpoint of snapshot v is `_delta_log/<v>.checkpoint.parquet`, one row per action with
// the struct columns txn, add, remove, metaData, protocol (exactly one non-null per row):
// protocol, metaData, every live add (with stats as JSON text, partitionValues as
// map<string,string>), removes whose deletionTimestamp is within
// delta.deletedFileRetentionDuration (default 1 week) of `now_ms` (tombstones), and every txn.
// No commitInfo and no cdc. The rows are built and written by the engine (from_json over the
// serialized actions, then COPY ... TO parquet) into a hidden temporary file, fsynced
// (FileSystem::SyncFile) and moved into place with RenameNoReplace (a checkpoint already present
// for v is kept: it holds the same state), so concurrent writers of one checkpoint never leave a
// torn file.
// Then `_last_checkpoint` is replaced atomically with
// {"version":v,"size":<rows>,"sizeInBytes":<file size>,"numOfAddFiles":<adds>}.
//
// The checkpoint is written only after commit v exists. A failed checkpoint never breaks the
// table: readers fall back to older checkpoints and commits.
//
// Ownership: borrows conn and fs for the call. Thread safety: as the Connection.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "delta/snapshot.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::delta {

inline constexpr int64_t kDefaultCheckpointInterval = 10;
inline constexpr int64_t kDefaultDeletedFileRetentionMs = 7LL * 24 * 3600 * 1000;
inline constexpr int64_t kDefaultLogRetentionMs = 30LL * 24 * 3600 * 1000;

struct CheckpointInfo {
  int64_t version = 0;
  int64_t num_actions = 0;  // rows in the checkpoint ("size")
  int64_t num_add_files = 0;
  int64_t size_bytes = 0;
  std::string path;
  // The checkpoint file was already there (written by another writer): it was kept and
  // _last_checkpoint was not touched; the counts above describe what this call would have written.
  bool already_existed = false;
};

// delta.checkpointInterval of `metadata` (default 10; InvalidArgument when not a positive int).
Result<int64_t> CheckpointInterval(const Metadata& metadata);
// delta.deletedFileRetentionDuration / delta.logRetentionDuration in ms (defaults above).
Result<int64_t> DeletedFileRetentionMs(const Metadata& metadata);
Result<int64_t> LogRetentionMs(const Metadata& metadata);

// True when Spark would checkpoint after committing `version`: version > 0 and a multiple of
// the interval.
bool ShouldCheckpoint(int64_t version, int64_t interval);

// Writes the checkpoint of `snapshot` (see above) and updates _last_checkpoint.
Result<CheckpointInfo> WriteCheckpoint(engine::Connection* conn, fs::FileSystem* fs,
                                       const Snapshot& snapshot, int64_t now_ms);

}  // namespace sluice::delta
