// The checkpoint layout of a query run in group mode (docs/scale-out.md "The model"):
//   <root>/metadata             the query id (stream/checkpoint_metadata.h), shared by every task
//   <root>/group                which group and topic the checkpoint belongs to (GroupRecord)
//   <root>/tasks/<partition>/   one whole checkpoint per task (docs/formats/checkpoint.md)
// and the Delta txn appId of a task, "<query id>-task-<partition>".
//
// Thread safety: free functions; ClaimGroupRecord may race with itself in other processes (the
// first creator's record wins, the others compare against it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "fs/file_system.h"
#include "stream/checkpoint_layout.h"

namespace sluice::scaleout {

inline constexpr std::string_view kTasksDirName = stream::kTasksDirName;
inline constexpr std::string_view kGroupRecordName = stream::kGroupRecordFileName;

// <root>/tasks
std::string TasksDir(std::string_view root);
// <root>/tasks/<partition>; `partition` >= 0.
std::string TaskCheckpointRoot(std::string_view root, int32_t partition);
// "<query id>-task-<partition>": the txn appId of the task's Delta commits.
std::string TaskAppId(std::string_view query_id, int32_t partition);
// The partition a directory name under tasks/ stands for: decimal digits without a leading zero
// (or "0"), within int32. InvalidArgument naming the entry otherwise.
Result<int32_t> ParseTaskDirName(std::string_view name);

// <root>/group: {"version":1,"group":"<group id>","topic":"<topic>"}.
struct GroupRecord {
  std::string group;
  std::string topic;
  bool operator==(const GroupRecord&) const = default;
};
std::string SerializeGroupRecord(const GroupRecord& record);
// Corruption (without a file name: callers add it) for bytes that are not such an object, or of
// another version.
Result<GroupRecord> ParseGroupRecord(std::string_view bytes);

// Creates <root>/group with `want` (create-if-absent), or reads the one there and compares:
// InvalidArgument naming the checkpoint, the recorded group and topic and the wanted ones when
// they differ; Corruption naming the file when it does not parse.
Status ClaimGroupRecord(fs::FileSystem& fs, std::string_view root, const GroupRecord& want);

// The partitions that have a task directory under <root>/tasks, ascending; empty when there is
// no tasks/ directory. Corruption naming an entry that is not a partition number.
Result<std::vector<int32_t>> ListTasks(fs::FileSystem& fs, std::string_view root);

// Whether <root> holds batches of a run without a group (an entry in <root>/offsets/).
Result<bool> HasSingleProcessBatches(fs::FileSystem& fs, std::string_view root);

}  // namespace sluice::scaleout
