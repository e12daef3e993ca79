// Purging old entries of the offset and commit logs (docs/micro-batch-loop.md "One trigger"): after
// offsets/<N> is written, if N > minBatchesToRetain then offsets/k and commits/k for
// k < N - minBatchesToRetain are deleted, so the last minBatchesToRetain + 1 offsets stay.
//
// Thread safety: as the logs; call from the query thread (or one purge thread at a time).
#pragma once

#include <cstdint>
#include <optional>

#include "common/ids.h"
#include "common/result.h"
#include "stream/commit_log.h"
#include "stream/offset_seq_log.h"

namespace sluice::stream {

struct PurgeResult {
  int64_t offsets_deleted = 0;
  int64_t commits_deleted = 0;
};

// Purges both logs after offsets/<current> was written. InvalidArgument when
// min_batches_to_retain < 1 (Spark requires a positive value). Does nothing when
// current <= min_batches_to_retain.
Result<PurgeResult> PurgeOldLogEntries(const OffsetSeqLog& offsets, const CommitLog& commits,
                                       BatchId current,
                                       int64_t min_batches_to_retain = kDefaultMinBatchesToRetain);

// As above, for a caller that purges after every batch (the micro-batch loop). `*purged_below`
// (in/out) is the threshold of that caller's previous successful purge: every entry below it is
// gone, so only [*purged_below, threshold) is deleted, by name, without listing the two
// directories (a listing stats every entry: about 200 stat calls per batch at the default
// retention). Unset: the directories are listed once. Deletes the same entries either way.
Result<PurgeResult> PurgeOldLogEntries(const OffsetSeqLog& offsets, const CommitLog& commits,
                                       BatchId current, int64_t min_batches_to_retain,
                                       std::optional<BatchId>* purged_below);

}  // namespace sluice::stream
