// The pre-flight check that a streaming table's or flow's definition can continue from the
// checkpoint it already has (docs/pipelines.md "sluice check"), made by `sluice check`, `sluice
// run --dry-run` and `sluice run` before anything is created. It applies the restart rules of a
// real start, in their order, to a copy of what the checkpoint stores about the query, never to
// the checkpoint itself (nothing is written there):
//
//   sources/identity          the number of sources and each one's identity (another table,
//                             directory or topic: stream/source_identity.h)
//   offsets/<N>, commits/<N>  the number of sources of the last batch, the persisted conf (the
//                             number of state partitions, ...): stream/restart_plan.h
//   state/<op>/_metadata/metadata, state/<op>/<p>[/<store>]/_metadata/schema
//                             the stateful operators and each one's state schema (grouping key,
//                             aggregates, deduplication key, join): copied to the scratch
//                             checkpoint, where the query's plan, opened and run over empty
//                             inputs by the schema check, meets them exactly as its first batch
//                             after a restart would (plan/operator_check.h,
//                             state/operator_metadata.h)
//
// Thread safety: free functions; `fs` and the scratch directory are the caller's.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "fs/file_system.h"
#include "stream/persisted_conf.h"

namespace sluice::sql {

// Reads the checkpoint at `checkpoint` on `fs` and prepares the local directory
// `scratch_checkpoint` (empty; the check's plan runs there) with its operator metadata, state
// schemas and latest commit. `identities`: the query's sources as they would be recorded
// (Source::Description(), in order). Returns the persisted conf a resumed run uses (restored
// from the checkpoint over `session_conf`); nullopt when the checkpoint has no batch yet (the
// query starts fresh: nothing to check). InvalidArgument when the sources changed (their number, or
// one of them) or the last batch's offsets do not fit them; the message names the checkpoint
// and the difference. I/O and Corruption errors of the checkpoint's files.
Result<std::optional<stream::ConfMap>> PrepareResumeCheck(
    const std::shared_ptr<fs::FileSystem>& fs, const std::string& checkpoint,
    const std::vector<std::string>& identities, const stream::ConfMap& session_conf,
    const std::string& scratch_checkpoint);

// `st` with `scratch_checkpoint` replaced by `checkpoint` in its message, and whether it came
// from the checkpoint's contents (it named the scratch checkpoint: a stateful operator or state
// schema that no longer matches), so that the caller can say what to do.
std::pair<Status, bool> FromScratchCheckpoint(const Status& st, const std::string& checkpoint,
                                              const std::string& scratch_checkpoint);

}  // namespace sluice::sql
