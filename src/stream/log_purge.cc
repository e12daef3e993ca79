#include "stream/log_purge.h"

#include <string>

namespace sluice::stream {

Result<PurgeResult> PurgeOldLogEntries(const OffsetSeqLog& offsets, const CommitLog& commits,
                                       BatchId current, int64_t min_batches_to_retain) {
  if (min_batches_to_retain < 1) {
    return Status::InvalidArgument("minBatchesToRetain must be positive, got " +
                                   std::to_string(min_batches_to_retain));
  }
  PurgeResult result;
  std::optional<BatchId> threshold = PurgeThreshold(current, min_batches_to_retain);
  if (!threshold.has_value()) return result;
  SLUICE_ASSIGN_OR_RETURN(result.offsets_deleted, offsets.Purge(*threshold));
  SLUICE_ASSIGN_OR_RETURN(result.commits_deleted, commits.Purge(*threshold));
  return result;
}

}  // namespace sluice::stream
