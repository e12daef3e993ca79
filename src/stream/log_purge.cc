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

Result<PurgeResult> PurgeOldLogEntries(const OffsetSeqLog& offsets, const CommitLog& commits,
                                       BatchId current, int64_t min_batches_to_retain,
                                       std::optional<BatchId>* purged_below) {
  if (purged_below == nullptr || !purged_below->has_value()) {
    SLUICE_ASSIGN_OR_RETURN(PurgeResult result,
                            PurgeOldLogEntries(offsets, commits, current, min_batches_to_retain));
    if (purged_below != nullptr) {
      *purged_below = PurgeThreshold(current, min_batches_to_retain);
    }
    return result;
  }
  if (min_batches_to_retain < 1) {
    return Status::InvalidArgument("minBatchesToRetain must be positive, got " +
                                   std::to_string(min_batches_to_retain));
  }
  PurgeResult result;
  std::optional<BatchId> threshold = PurgeThreshold(current, min_batches_to_retain);
  if (!threshold.has_value() || *threshold <= **purged_below) return result;
  SLUICE_ASSIGN_OR_RETURN(result.offsets_deleted,
                          offsets.log().PurgeRange(**purged_below, *threshold));
  SLUICE_ASSIGN_OR_RETURN(result.commits_deleted,
                          commits.log().PurgeRange(**purged_below, *threshold));
  *purged_below = threshold;
  return result;
}

}  // namespace sluice::stream
