// The restart decision: where a query resumes, computed from the offset and commit logs exactly
// as Spark's MicroBatchExecution.populateStartOffsets does (docs/streaming.md "Start and restart").
//
// Let N be the largest id in offsets/.
// - No offsets: fresh start, batch 0, watermark 0, the session's conf; Corruption when the
//   commit log has entries (offsets deleted; Spark starts at batch 0 and fails on commits/0).
//   Previous watermark 0.
// - N > 0 and offsets/<N-1> missing: Corruption (batch N-1 does not exist).
// - Latest commit C == N: next batch N+1, start offsets = end offsets of N,
//   watermark = max(offsets[N].batchWatermarkMs, commits[N].nextBatchWatermarkMs), timestamp from
//   the clock when the batch is constructed. Previous watermark (the late-row threshold) =
//   offsets[N].batchWatermarkMs, the watermark batch N ran with, as within one run.
// - C > N: Corruption naming commits/<C> and the missing offsets/<C>. (Spark falls through to
//   the re-run below; the re-run then found its commit already written and failed with the
//   misleading "another query is using the checkpoint".)
// - Otherwise (C == N-1, C < N-1 with a warning, no commits): re-run batch N exactly: start = end
// offsets of N-1 (none for N == 0), end =
//   offsets[N], its batchWatermarkMs and batchTimestampMs. offsets/<N> is not written again.
//   Previous watermark = offsets[N-1].batchWatermarkMs (0 for N == 0).
// In both restart cases the persisted conf of offsets[N] is restored (a missing key gets its
// legacy default, or keeps the session's value when it has none), and the number of sources must
// equal offsets[N]'s.
//
// Sluice is stricter than Spark in one place: Spark silently lets the checkpoint's persisted conf
// override the session; Sluice does the same for values the user did not set, but a value the
// user set explicitly for this query that differs from the checkpoint's is refused with an error
// naming the key and both values, since the query would otherwise silently ignore it.
//
// Thread safety: pure functions over their inputs (PlanRestart reads the logs).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "common/result.h"
#include "stream/commit_log.h"
#include "stream/offset_seq_log.h"
#include "stream/persisted_conf.h"

namespace sluice::stream {

struct RestartOptions {
  // How many streaming sources the query's plan has now (sources/<i>, i < num_sources).
  size_t num_sources = 0;
  // The session's values of the persisted keys: what a fresh checkpoint records (normally
  // DefaultPersistedConf() overlaid with the user's settings).
  ConfMap session_conf = DefaultPersistedConf();
  // The persisted keys the user set explicitly for this query (their values are in
  // session_conf). A restored value that differs from one of these is an error.
  std::set<std::string> explicit_keys;
  // Checkpoint location, for messages only.
  std::string checkpoint_root;
};

enum class StartKind {
  kFresh,       // no offsets: batch 0
  kRerunBatch,  // offsets/<N> without commits/<N>: run batch N again with what it recorded
  kNextBatch,   // batch N committed: construct batch N+1
};

std::string_view StartKindName(StartKind kind);  // "fresh", "rerun", "next"

struct RestartPlan {
  StartKind kind = StartKind::kFresh;
  // The batch to run next: 0, N (re-run) or N+1.
  BatchId batch_id{0};
  // Per source (size num_sources, or empty for a fresh start): the offsets the next batch starts
  // from, i.e. the end offsets of the last batch before it (committedOffsets). nullopt: the
  // source has no offset yet and starts from its initial position.
  std::vector<std::optional<std::string>> start_offsets;
  // kRerunBatch only: the recorded end offsets of batch N (availableOffsets). Empty otherwise:
  // the sources are asked for their latest offsets.
  std::vector<std::optional<std::string>> end_offsets;
  // The global watermark the next batch runs with.
  int64_t batch_watermark_ms = 0;
  // The watermark the batch before it ran with: the late-row threshold of the next batch
  // (Spark's prevOffsetSeqMetadata.batchWatermarkMs). 0 on a fresh start or a re-run of batch 0.
  int64_t previous_watermark_ms = 0;
  // kRerunBatch only: the recorded batch timestamp (current_timestamp() of the batch).
  std::optional<int64_t> batch_timestamp_ms;
  // The persisted conf the run uses (restored, or the session's on a fresh start).
  ConfMap conf;
  // The offset log version of offsets/<N> (1 for a fresh start): a v2 log stays v2.
  int offset_log_version = kOffsetSeqLogVersion;
  // Things to log at WARN: missing conf keys given defaults, a commit log trailing by more than
  // one batch, session values overridden by the checkpoint.
  std::vector<std::string> warnings;
};

// The decision from already-read log entries: `latest` = offsets/<N> (nullopt if the log is
// empty), `previous` = offsets/<N-1> (nullopt if absent), `latest_commit` = the newest commit.
Result<RestartPlan> ComputeRestartPlan(
    const std::optional<std::pair<BatchId, OffsetSeq>>& latest,
    const std::optional<OffsetSeq>& previous,
    const std::optional<std::pair<BatchId, CommitMetadata>>& latest_commit,
    const RestartOptions& options);

// Reads the logs and computes the decision. Errors carry the file names.
Result<RestartPlan> PlanRestart(const OffsetSeqLog& offsets, const CommitLog& commits,
                                const RestartOptions& options);

}  // namespace sluice::stream
