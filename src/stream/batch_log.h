// BatchLog: a directory of files named by decimal batch id (Spark's HDFSMetadataLog), the common
// part of the offset log (offsets/<N>) and the commit log (commits/<N>). It stores bytes; the
// typed logs (OffsetSeqLog, CommitLog) serialize.
//
// Rules (docs/formats/checkpoint.md §"log directories"):
// - Entry N lives in <dir>/<N>, N in canonical decimal (no sign, no leading zeros).
// - Add writes with FileSystem::CreateIfAbsent: readers never see a partial entry, and an
//   existing entry is never overwritten. An existing entry means another writer: Conflict
//   "... another query is using the checkpoint ...".
// - Listing ignores every name that is not a canonical non-negative decimal int64: hidden
//   temporary files (".5.<x>.tmp"), Hadoop ".5.crc" files, "5.json", and names Spark would parse
//   but never writes ("+5", "007", "-1").
// - A missing directory is an empty log.
//
// Thread safety: a BatchLog is immutable after construction; concurrent calls are safe to the
// extent the FileSystem's are (exactly one of racing Add(N) calls wins, also across processes).
// Ownership: shares the FileSystem.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ids.h"
#include "common/result.h"
#include "fs/file_system.h"

namespace sluice::stream {

// The batch id a log file name denotes, or nullopt when the name is not a canonical
// non-negative decimal int64 (see above).
std::optional<BatchId> ParseBatchFileName(std::string_view name);

// The batch id below which entries are purged after offsets/<current> was written, or nullopt
// when nothing is purged: Spark purges k < N - minBatchesToRetain once N > minBatchesToRetain.
std::optional<BatchId> PurgeThreshold(BatchId current, int64_t min_batches_to_retain);

// Parses a log's version line "v<k>" (Spark's MetadataVersionUtil.validateVersion): k must be a
// positive decimal int. Corruption "log file is malformed: failed to read the log version from
// '<line>'" otherwise; NotSupported "unsupported log version: the maximum supported log version
// is v<max>, but encountered v<k>; the file was written by a newer version ..." when k > max.
Result<int> ParseLogVersion(std::string_view line, int max_supported_version);

// Splits file bytes into lines as Java's BufferedReader.readLine does for the line feeds Sluice
// and Spark write: on '\n', dropping one '\r' before it; a final '\n' ends the last line
// without starting an empty one. Empty input yields no lines.
std::vector<std::string_view> SplitLogLines(std::string_view bytes);

// Spark's default spark.sql.streaming.minBatchesToRetain.
inline constexpr int64_t kDefaultMinBatchesToRetain = 100;

class BatchLog {
 public:
  // `dir` is the log directory (<checkpoint>/offsets); `checkpoint_root` only feeds messages.
  BatchLog(std::shared_ptr<fs::FileSystem> fs, std::string dir, std::string checkpoint_root);

  const std::string& dir() const { return dir_; }
  const std::string& checkpoint_root() const { return checkpoint_root_; }
  fs::FileSystem& file_system() const { return *fs_; }
  // <dir>/<id>.
  std::string PathFor(BatchId id) const;

  // Writes entry `id` (create-if-absent, durable when options.sync). Conflict when it exists.
  // InvalidArgument for a negative id. Other I/O errors name the path.
  Status Add(BatchId id, std::string_view bytes, const fs::WriteOptions& options = {}) const;

  // Add in two phases (FileSystem::PrepareCreate / PublishCreate), so that writing and syncing
  // the entry's bytes can run on another thread while the step that must precede the entry runs:
  // Prepare makes nothing visible; Publish makes the entry appear (durable with options.sync),
  // with Add's errors (Conflict when it exists). Abandon drops a prepared entry not published.
  Result<fs::FileSystem::PreparedFile> Prepare(BatchId id, std::string_view bytes,
                                               const fs::WriteOptions& options = {}) const;
  Status Publish(BatchId id, const fs::FileSystem::PreparedFile& file,
                 const fs::WriteOptions& options = {}) const;
  void Abandon(const fs::FileSystem::PreparedFile& file) const { fs_->AbandonCreate(file); }

  // The bytes of entry `id`; NotFound when absent.
  Result<std::string> Read(BatchId id) const;

  // Ids of all entries, ascending.
  Result<std::vector<BatchId>> ListIds() const;

  // Deletes every entry with id < threshold (exclusive, as Spark's purge). Entries that vanish
  // meanwhile are not an error. Returns how many were deleted.
  Result<int64_t> Purge(BatchId threshold) const;
  // Deletes the entries with from <= id < threshold by name, without listing the directory (for
  // a caller that knows every entry below `from` is gone). Absent entries are skipped. Returns
  // how many were deleted.
  Result<int64_t> PurgeRange(BatchId from, BatchId threshold) const;

 private:
  std::shared_ptr<fs::FileSystem> fs_;
  std::string dir_;
  std::string checkpoint_root_;

  Status ConflictIfExists(BatchId id, Status st) const;
};

}  // namespace sluice::stream
