#include "delta/time_travel.h"

#include <algorithm>

#include "delta/snapshot.h"
#include "delta/values.h"

namespace sluice::delta {

Result<std::vector<CommitTimestamp>> ListCommitTimestamps(fs::FileSystem* fs,
                                                          const LogListing& listing,
                                                          const Metadata* latest_metadata) {
  auto earliest = listing.EarliestRecreatableVersion();
  auto latest = listing.LatestVersion();
  std::vector<CommitTimestamp> out;
  if (!earliest || !latest) return out;
  bool ict =
      latest_metadata != nullptr && latest_metadata->ConfigIsTrue("delta.enableInCommitTimestamps");
  int64_t ict_from = 0;
  if (ict) {
    if (auto v = latest_metadata->Config("delta.inCommitTimestampEnablementVersion")) {
      try {
        ict_from = std::stoll(*v);
      } catch (const std::exception&) {
        return Status::Corruption("invalid delta.inCommitTimestampEnablementVersion '" + *v + "'");
      }
    }
  }
  for (int64_t v = earliest->value(); v <= latest->value(); ++v) {
    Version version(v);
    auto c = listing.commits.find(version);
    int64_t ts = 0;
    bool have = false;
    if (c != listing.commits.end()) {
      if (ict && v >= ict_from) {
        SLUICE_ASSIGN_OR_RETURN(auto actions, ReadCommitActions(fs, c->second.info.path));
        for (const Action& a : actions) {
          if (const auto* ci = std::get_if<CommitInfo>(&a);
              ci != nullptr && ci->in_commit_timestamp) {
            ts = *ci->in_commit_timestamp;
            have = true;
          }
        }
        if (!have) {
          return Status::Corruption(
              "commit " + c->second.info.path +
              " has no commitInfo.inCommitTimestamp but in-commit timestamps are enabled");
        }
      } else {
        ts = c->second.info.mtime_ms;
        have = true;
      }
    } else if (auto cp = listing.checkpoints.find(version); cp != listing.checkpoints.end()) {
      ts = cp->second.files.front().info.mtime_ms;
      have = true;
    }
    if (!have) continue;
    if (!out.empty() && ts <= out.back().timestamp_ms)
      ts = out.back().timestamp_ms + 1;  // monotonize
    out.push_back(CommitTimestamp{version, ts});
  }
  return out;
}

Result<Version> VersionAtTimestamp(const std::vector<CommitTimestamp>& commits,
                                   int64_t timestamp_ms) {
  if (commits.empty()) return Status::NotFound("the table has no commits");
  auto describe = [](int64_t ms) {
    return std::to_string(ms) + " ms (" + FormatMillisIso(ms) + ")";
  };
  const CommitTimestamp& first = commits.front();
  const CommitTimestamp& last = commits.back();
  if (timestamp_ms < first.timestamp_ms) {
    return Status::NotFound(
        "The provided timestamp " + describe(timestamp_ms) +
        " is before the earliest available version " + first.version.ToString() +
        ". Please use a timestamp greater than or equal to " + describe(first.timestamp_ms) + ".");
  }
  if (timestamp_ms > last.timestamp_ms) {
    return Status::NotFound("The provided timestamp " + describe(timestamp_ms) +
                            " is after the latest available version " + last.version.ToString() +
                            ". Please use a timestamp less than or equal to " +
                            describe(last.timestamp_ms) + ".");
  }
  // Latest commit with ts <= timestamp_ms.
  auto it =
      std::upper_bound(commits.begin(), commits.end(), timestamp_ms,
                       [](int64_t t, const CommitTimestamp& c) { return t < c.timestamp_ms; });
  return std::prev(it)->version;
}

Result<std::pair<Version, Version>> VersionRangeForTimestamps(
    const std::vector<CommitTimestamp>& commits, int64_t start_ms, std::optional<int64_t> end_ms) {
  if (commits.empty()) return Status::NotFound("the table has no commits");
  auto describe = [](int64_t ms) {
    return std::to_string(ms) + " ms (" + FormatMillisIso(ms) + ")";
  };
  auto first_at_or_after =
      std::lower_bound(commits.begin(), commits.end(), start_ms,
                       [](const CommitTimestamp& c, int64_t t) { return c.timestamp_ms < t; });
  if (first_at_or_after == commits.end()) {
    return Status::NotFound(
        "The provided timestamp " + describe(start_ms) + " is after the latest available version " +
        commits.back().version.ToString() + ". Please use a timestamp less than or equal to " +
        describe(commits.back().timestamp_ms) + ".");
  }
  Version end = commits.back().version;
  if (end_ms) {
    if (*end_ms < commits.front().timestamp_ms) {
      return Status::NotFound("The provided timestamp " + describe(*end_ms) +
                              " is before the earliest available version " +
                              commits.front().version.ToString() +
                              ". Please use a timestamp greater than or equal to " +
                              describe(commits.front().timestamp_ms) + ".");
    }
    auto it =
        std::upper_bound(commits.begin(), commits.end(), *end_ms,
                         [](int64_t t, const CommitTimestamp& c) { return t < c.timestamp_ms; });
    end = std::prev(it)->version;
  }
  if (end < first_at_or_after->version) {
    return Status::InvalidArgument("CDC range from start " + first_at_or_after->version.ToString() +
                                   " to end " + end.ToString() +
                                   " was invalid. End cannot be before start.");
  }
  return std::make_pair(first_at_or_after->version, end);
}

}  // namespace sluice::delta
