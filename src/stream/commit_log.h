// The commit log, commits/<N> (Spark's CommitLog): written after the sink accepted batch N. Its
// presence marks batch N as done; it carries the global watermark for the next batch.
// Format (docs/formats/checkpoint.md §commits):
//
//   v1
//   {"nextBatchWatermarkMs":0}
//
// no trailing newline. A missing line 2 (Spark 2.3 logs) reads as {}: watermark 0. The version
// is the state store checkpoint format version (sluice.streaming.stateStore.
// checkpointFormatVersion, default 1) and must match the query's exactly; version 2 adds
// "stateUniqueIds":{"<opId>":[[uuid,..],..]} (one array of store ids per partition).
//
// Thread safety: CommitLog is immutable after construction and safe for concurrent use (see
// BatchLog).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "common/result.h"
#include "fs/file_system.h"
#include "stream/batch_log.h"

namespace sluice::stream {

inline constexpr int kDefaultCommitLogVersion = 1;
inline constexpr int kMaxCommitLogVersion = 2;

struct CommitMetadata {
  // The global watermark after batch N, i.e. the one batch N+1 runs with.
  int64_t next_batch_watermark_ms = 0;
  // Checkpoint format v2 only: operator id -> partition -> state store unique ids.
  std::optional<std::map<int64_t, std::vector<std::vector<std::string>>>> state_unique_ids;

  bool operator==(const CommitMetadata&) const = default;
};

// {"nextBatchWatermarkMs":N} (+ ,"stateUniqueIds":{...} when set).
std::string SerializeCommitMetadata(const CommitMetadata& metadata);
// Missing fields take their defaults. Corruption for bad JSON or a field of the wrong type.
Result<CommitMetadata> ParseCommitMetadata(std::string_view json);

// The file bytes "v<version>\n<json>". InvalidArgument for a version outside 1..max, and for
// stateUniqueIds in a v1 entry (v1 cannot hold them).
Result<std::string> SerializeCommit(const CommitMetadata& metadata, int version);
// Parses file bytes written with `expected_version` (exact match). Corruption for an empty file,
// a malformed version line, bad JSON, or stateUniqueIds in a v1 entry; NotSupported for a version
// that differs from `expected_version` (naming both). Messages name no file.
Result<CommitMetadata> ParseCommit(std::string_view bytes, int expected_version);

class CommitLog {
 public:
  struct Options {
    // The checkpoint format version: written in every entry and required of every entry read.
    int version = kDefaultCommitLogVersion;
  };

  // The log in <checkpoint_root>/commits.
  CommitLog(std::shared_ptr<fs::FileSystem> fs, const std::string& checkpoint_root);
  CommitLog(std::shared_ptr<fs::FileSystem> fs, const std::string& checkpoint_root,
            Options options);

  // Writes commits/<id> (create-if-absent). Conflict "... another query is using the checkpoint
  // ..." when it exists.
  Status Add(BatchId id, const CommitMetadata& metadata,
             const fs::WriteOptions& options = {}) const;
  // Add in two phases (BatchLog::Prepare / Publish): the entry's bytes are written and synced
  // by Prepare without appearing; Publish makes commits/<id> appear, with Add's errors.
  Result<fs::FileSystem::PreparedFile> Prepare(BatchId id, const CommitMetadata& metadata,
                                               const fs::WriteOptions& options = {}) const;
  Status Publish(BatchId id, const fs::FileSystem::PreparedFile& file,
                 const fs::WriteOptions& options = {}) const {
    return log_.Publish(id, file, options);
  }
  void Abandon(const fs::FileSystem::PreparedFile& file) const { log_.Abandon(file); }

  // Reads commits/<id>. NotFound when absent; parse errors carry the file's path.
  Result<CommitMetadata> Get(BatchId id) const;
  // The entry with the largest id, or nullopt for an empty log. A corrupt latest entry is an
  // error.
  Result<std::optional<std::pair<BatchId, CommitMetadata>>> Latest() const;
  Result<std::vector<BatchId>> ListIds() const { return log_.ListIds(); }
  Result<int64_t> Purge(BatchId threshold) const { return log_.Purge(threshold); }

  const BatchLog& log() const { return log_; }
  const Options& options() const { return options_; }

 private:
  BatchLog log_;
  Options options_;
};

}  // namespace sluice::stream
