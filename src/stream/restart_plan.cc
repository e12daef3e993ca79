#include "stream/restart_plan.h"

#include <algorithm>

namespace sluice::stream {

namespace {

std::string OffsetsName(BatchId id) { return "offsets/" + id.ToString(); }

std::string Where(const RestartOptions& options) {
  return options.checkpoint_root.empty() ? std::string("the checkpoint")
                                         : "checkpoint " + options.checkpoint_root;
}

// commits/<c> exists but the offset log ends before it (at `latest`, or is empty): offsets/<c>,
// written before commits/<c>, was deleted. Re-running the last batch (Spark's fall-through) ends
// in a failure to write a commit that exists, reported as another query on the checkpoint.
Status DeletedOffsets(BatchId commit, std::optional<BatchId> latest,
                      const RestartOptions& options) {
  return Status::Corruption(
      "cannot restart the query from " + Where(options) + ": it is damaged: commits/" +
      commit.ToString() + " exists but " + OffsetsName(commit) + " does not (" +
      (latest ? "the offset log ends at " + OffsetsName(*latest)
              : std::string("the offset log is empty")) +
      "), so offset log entries were deleted; restore them, or start the query on a new "
      "checkpoint");
}

// The offsets of `seq` for `num_sources` sources, or an error when the counts differ. A v2 entry
// Spark wrote may omit trailing sources without offsets, so it may list fewer.
Result<std::vector<std::optional<std::string>>> OffsetsForSources(const OffsetSeq& seq, BatchId id,
                                                                  const RestartOptions& options) {
  // A v2 entry Sluice wrote names every source: fewer is a cut (issue 24, offset_seq_log.h).
  SLUICE_RETURN_NOT_OK(CheckNoSourceLineLost(seq, options.num_sources)
                           .WithContext("cannot restart the query from " + Where(options) +
                                        ": offset log file " +
                                        (options.checkpoint_root.empty()
                                             ? OffsetsName(id)
                                             : options.checkpoint_root + "/" + OffsetsName(id))));
  const size_t recorded = seq.offsets.size();
  const bool fits =
      recorded == options.num_sources || (seq.version >= 2 && recorded < options.num_sources);
  if (!fits) {
    return Status::InvalidArgument(
        "cannot restart the query from " + Where(options) + ": there are " +
        std::to_string(recorded) + " sources in the checkpoint offsets (" + OffsetsName(id) +
        ") and now there are " + std::to_string(options.num_sources) +
        " sources in the query; the sources of a streaming query cannot change across "
        "restarts: start it with a new checkpoint location");
  }
  std::vector<std::optional<std::string>> out = seq.offsets;
  out.resize(options.num_sources);
  return out;
}

// Restores the persisted conf of offsets[N] as Spark's OffsetSeqMetadata.setSessionConf does,
// refusing explicit session values it would override.
Status RestoreConf(const OffsetSeqMetadata& md, BatchId id, const RestartOptions& options,
                   RestartPlan* plan) {
  std::vector<std::string> changes;
  for (std::string_view key_view : PersistedConfKeys()) {
    const std::string key(key_view);
    auto session = options.session_conf.find(key);
    const bool explicitly_set =
        options.explicit_keys.count(key) > 0 && session != options.session_conf.end();
    std::optional<std::string> restored;
    std::string origin;
    auto recorded = md.conf.find(key);
    if (recorded != md.conf.end()) {
      restored = recorded->second;
      origin = "recorded in " + OffsetsName(id);
    } else if (std::optional<std::string> legacy = LegacyConfDefault(key)) {
      restored = *legacy;
      origin = "the legacy default for checkpoints that do not record it";
      plan->warnings.push_back("conf '" + key + "' was not found in " + OffsetsName(id) +
                               ", using the legacy default '" + *legacy + "'");
    } else {
      plan->warnings.push_back("conf '" + key + "' was not found in " + OffsetsName(id) +
                               (session != options.session_conf.end()
                                    ? ", using the session's value '" + session->second + "'"
                                    : "; no value set in the session"));
      if (session != options.session_conf.end()) plan->conf[key] = session->second;
      continue;
    }
    if (session != options.session_conf.end() && session->second != *restored) {
      if (explicitly_set) {
        changes.push_back(key + " is '" + session->second + "' in this query but '" + *restored +
                          "' (" + origin + ")");
      } else {
        plan->warnings.push_back("updating conf '" + key + "' from the session's '" +
                                 session->second + "' to the checkpoint's '" + *restored + "'");
      }
    }
    plan->conf[key] = *restored;
  }
  for (const auto& [key, value] : md.conf) {
    if (!IsPersistedConfKey(key)) {
      plan->warnings.push_back("ignoring unknown conf '" + key + "' = '" + value + "' in " +
                               OffsetsName(id));
    }
  }
  if (!changes.empty()) {
    std::string msg = "cannot restart the query from " + Where(options) +
                      ": the persisted configuration changed: ";
    for (size_t i = 0; i < changes.size(); ++i) msg += (i > 0 ? "; " : "") + changes[i];
    msg +=
        ". These settings are fixed by the checkpoint when the query first starts and cannot "
        "change across restarts: remove the setting to continue with the checkpoint's value, "
        "or start the query with a new checkpoint location";
    return Status::InvalidArgument(std::move(msg));
  }
  return Status::OK();
}

}  // namespace

std::string_view StartKindName(StartKind kind) {
  switch (kind) {
    case StartKind::kFresh:
      return "fresh";
    case StartKind::kRerunBatch:
      return "rerun";
    case StartKind::kNextBatch:
      return "next";
  }
  return "?";
}

Result<RestartPlan> ComputeRestartPlan(
    const std::optional<std::pair<BatchId, OffsetSeq>>& latest,
    const std::optional<OffsetSeq>& previous,
    const std::optional<std::pair<BatchId, CommitMetadata>>& latest_commit,
    const RestartOptions& options) {
  RestartPlan plan;
  if (!latest.has_value()) {
    plan.kind = StartKind::kFresh;
    plan.batch_id = BatchId(0);
    plan.conf = options.session_conf;
    if (latest_commit.has_value())
      return DeletedOffsets(latest_commit->first, std::nullopt, options);
    return plan;
  }
  const BatchId n = latest->first;
  const OffsetSeq& end_seq = latest->second;
  const OffsetSeqMetadata md = end_seq.metadata.value_or(OffsetSeqMetadata{});
  plan.offset_log_version = end_seq.version;

  SLUICE_ASSIGN_OR_RETURN(std::vector<std::optional<std::string>> end_offsets,
                          OffsetsForSources(end_seq, n, options));
  std::vector<std::optional<std::string>> start_offsets(options.num_sources);
  if (n.value() > 0) {
    if (!previous.has_value()) {
      return Status::Corruption("cannot restart the query from " + Where(options) + ": " +
                                OffsetsName(n.Prev()) + " does not exist although " +
                                OffsetsName(n) + " does (batch " + n.Prev().ToString() +
                                " doesn't exist)");
    }
    SLUICE_ASSIGN_OR_RETURN(start_offsets, OffsetsForSources(*previous, n.Prev(), options));
  }
  SLUICE_RETURN_NOT_OK(RestoreConf(md, n, options, &plan));

  if (latest_commit.has_value() && latest_commit->first == n) {
    plan.kind = StartKind::kNextBatch;
    plan.batch_id = n.Next();
    plan.start_offsets = std::move(end_offsets);
    plan.batch_watermark_ms =
        std::max(md.batch_watermark_ms, latest_commit->second.next_batch_watermark_ms);
    plan.previous_watermark_ms = md.batch_watermark_ms;
    return plan;
  }
  if (latest_commit.has_value() && latest_commit->first > n) {
    return DeletedOffsets(latest_commit->first, n, options);
  }
  if (latest_commit.has_value() && latest_commit->first < n.Prev()) {
    plan.warnings.push_back("batch completion log latest batch id is " +
                            latest_commit->first.ToString() + ", which is not trailing batch id " +
                            n.ToString() + " by one");
  }
  plan.kind = StartKind::kRerunBatch;
  plan.batch_id = n;
  plan.start_offsets = std::move(start_offsets);
  plan.end_offsets = std::move(end_offsets);
  plan.batch_watermark_ms = md.batch_watermark_ms;
  plan.batch_timestamp_ms = md.batch_timestamp_ms;
  if (previous.has_value()) {
    plan.previous_watermark_ms =
        previous->metadata.value_or(OffsetSeqMetadata{}).batch_watermark_ms;
  }
  return plan;
}

Result<RestartPlan> PlanRestart(const OffsetSeqLog& offsets, const CommitLog& commits,
                                const RestartOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(auto latest, offsets.Latest());
  std::optional<OffsetSeq> previous;
  if (latest.has_value() && latest->first.value() > 0) {
    Result<OffsetSeq> prev = offsets.Get(latest->first.Prev());
    if (prev.ok()) {
      previous = std::move(*prev);
    } else if (!prev.status().IsNotFound()) {
      return prev.status();
    }
  }
  SLUICE_ASSIGN_OR_RETURN(auto latest_commit, commits.Latest());
  return ComputeRestartPlan(latest, previous, latest_commit, options);
}

}  // namespace sluice::stream
