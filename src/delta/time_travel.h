// Commit timestamps and timestamp -> version resolution, with Spark's rules
// (DeltaHistoryManager): a commit's timestamp is its commitInfo.inCommitTimestamp when
// in-commit timestamps are enabled (delta.enableInCommitTimestamps, from
// delta.inCommitTimestampEnablementVersion on), else the commit file's modification time; file
// times are "monotonized": when ts(v) <= ts(v-1), ts(v) = ts(v-1) + 1 ms.
//
// TIMESTAMP AS OF t selects the latest commit with ts <= t. t before the earliest recreatable
// commit or after the latest commit is an error (Spark passes canReturnLastCommit=false).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "common/result.h"
#include "delta/actions.h"
#include "delta/log_segment.h"
#include "fs/file_system.h"

namespace sluice::delta {

struct CommitTimestamp {
  Version version;
  int64_t timestamp_ms = 0;
};

// Timestamps of versions [EarliestRecreatableVersion, LatestVersion], ascending.
// `latest_metadata` decides whether in-commit timestamps are used (null: file times).
Result<std::vector<CommitTimestamp>> ListCommitTimestamps(fs::FileSystem* fs,
                                                          const LogListing& listing,
                                                          const Metadata* latest_metadata);

// The version for TIMESTAMP AS OF `timestamp_ms`. NotFound with
// "The provided timestamp <t> ms (<iso>) is before the earliest available version <v>. ..." or
// "... is after the latest available version <v>. ...".
Result<Version> VersionAtTimestamp(const std::vector<CommitTimestamp>& commits,
                                   int64_t timestamp_ms);

// The versions [start, end] of a change-data-feed read by timestamps (Spark's
// startingTimestamp/endingTimestamp): start = the first commit with ts >= start_ms, end = the
// last commit with ts <= end_ms (latest when nullopt). NotFound when start_ms is after the
// latest commit or end_ms before the earliest; InvalidArgument when the range is empty.
Result<std::pair<Version, Version>> VersionRangeForTimestamps(
    const std::vector<CommitTimestamp>& commits, int64_t start_ms, std::optional<int64_t> end_ms);

}  // namespace sluice::delta
