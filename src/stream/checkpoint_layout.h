// Names of the entries of a checkpoint directory (docs/formats/checkpoint.md), mirroring Spark's
// layout so that people who operate Spark can read it:
//   <root>/metadata       query id                     (checkpoint_metadata.h)
//   <root>/offsets/<N>    write-ahead log of batch N   (offset_seq_log.h)
//   <root>/commits/<N>    batch N committed            (commit_log.h)
//   <root>/sources/<i>/   per-source logs              (sources/)
//   <root>/state/         operator state               (state/)
//   <root>/lock           the checkpoint lock          (checkpoint_lock.h)
//   <root>/group          a group-mode query's root: its batches are under <root>/tasks/<p>/,
//                         one checkpoint per input partition (scaleout/task_layout.h)
#pragma once

#include <string>
#include <string_view>

#include "fs/file_system.h"

namespace sluice::stream {

inline constexpr std::string_view kMetadataFileName = "metadata";
inline constexpr std::string_view kOffsetsDirName = "offsets";
inline constexpr std::string_view kCommitsDirName = "commits";
inline constexpr std::string_view kSourcesDirName = "sources";
inline constexpr std::string_view kStateDirName = "state";
inline constexpr std::string_view kLockFileName = "lock";
inline constexpr std::string_view kGroupRecordFileName = "group";
inline constexpr std::string_view kTasksDirName = "tasks";

inline std::string MetadataPath(std::string_view root) {
  return fs::JoinPath(root, kMetadataFileName);
}
inline std::string OffsetsDir(std::string_view root) { return fs::JoinPath(root, kOffsetsDirName); }
inline std::string CommitsDir(std::string_view root) { return fs::JoinPath(root, kCommitsDirName); }
inline std::string LockPath(std::string_view root) { return fs::JoinPath(root, kLockFileName); }

}  // namespace sluice::stream
