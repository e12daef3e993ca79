// FileSourceLog: the file source's record of the files each of its batches read, in
// <checkpoint>/sources/<i>/ (Spark's FileStreamSourceLog, without compaction).
//
// Entry <N> is the file "<N>" (decimal, no extension):
//   v1
//   {"path":"file:///landing/a.json","timestamp":1700000000000,"batchId":0,"numFiles":2}
//   {"path":"file:///landing/b.json","timestamp":1700000000500,"batchId":0,"numFiles":2}
// lines joined by "\n", no trailing newline; one JSON line per file in the order the files are
// read; `timestamp` is the file's modification time (ms), `batchId` = N. N is the log's own
// batch id (the source offset {"logOffset":N}), not the query's batch id. `numFiles` (Sluice's,
// on every line; Spark 4.2's FileStreamSourceLog reads entries carrying it: checked) is the
// entry's count of lines, so that an entry cut at a line boundary is detected: every proper prefix
// of an entry is Corruption. Entries without `numFiles` (written by Spark or an older Sluice) are
// read without that check. An entry with no files is never written (Spark and Sluice add entries
// only for new files), so one is Corruption (an entry cut after its version line). Entries are
// written with create-if-absent: an existing entry means another query writes the same checkpoint
// (Conflict). Names that are not canonical decimals are ignored (temporary files, "_schemas/");
// "<N>.compact" files (Spark compaction) are not read (NotSupported).
//
// Damaged entries (docs/formats/sources.md, "Torn tail"): Load() fails on a damaged entry below
// the latest one (its files were planned into a batch: without them they would be read again).
// A damaged latest entry is kept aside: if no batch was planned with it (the source's start
// offset is the entry before it), PrepareToPlan() deletes it and the source lists the files
// again, which is exact (none of its files reached a batch); if a batch was planned with it,
// PrepareToPlan() and Get() fail with Corruption naming the file and what is wrong.
//
// Thread safety: none (one source object owns it).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "fs/file_system.h"

namespace sluice::sources {

struct FileEntry {
  std::string path;       // file URI: "file:///abs/path" (percent-encoded)
  int64_t timestamp = 0;  // modification time, ms
  int64_t batch_id = 0;
};

class FileSourceLog {
 public:
  FileSourceLog(std::shared_ptr<fs::FileSystem> fs, std::string dir)
      : fs_(std::move(fs)), dir_(std::move(dir)) {}

  // Writes entry `batch_id` (crash points "sources.before_file_log_write" and
  // "sources.after_file_log_write" around it). Conflict when it exists already; InvalidArgument
  // for no entries.
  Status Add(int64_t batch_id, const std::vector<FileEntry>& entries);
  // Reads entry `batch_id`. NotFound when absent; Corruption naming the file when malformed.
  Result<std::vector<FileEntry>> Get(int64_t batch_id);

  // What a source opening on the log needs: the latest entry id (-1: none) and the paths of
  // every readable entry. A damaged latest entry is remembered (damaged_latest()), not an error.
  struct Loaded {
    int64_t latest_id = -1;
    std::vector<std::string> paths;
  };
  Result<Loaded> Load();
  // Before a batch is planned from start offset `planned` (the log id the stream has planned
  // through, -1 for none), with `latest` the source's latest entry id: the latest id the source
  // may deliver. Without a damaged latest entry that is `latest`. With one (id D): planned >= D is
  // Corruption (a batch was planned with it: its files cannot be known); planned == D - 1 deletes
  // it (with a warning naming it) and returns D - 1; planned < D - 1 returns D - 1 (deliver the
  // intact entries first).
  Result<int64_t> PrepareToPlan(int64_t planned, int64_t latest);
  // The damaged latest entry found by Load(), if any.
  std::optional<int64_t> damaged_latest() const { return damaged_latest_; }
  // The entry ids present, ascending: 0..N. An empty list when the directory does not exist;
  // Corruption naming the missing entry when there is a gap (a damaged log).
  Result<std::vector<int64_t>> ListIds();

  const std::string& dir() const { return dir_; }

  static std::string Serialize(const std::vector<FileEntry>& entries);
  // `batch_id` >= 0 checks every line's batchId against it.
  static Result<std::vector<FileEntry>> Parse(const std::string& text, const std::string& file,
                                              int64_t batch_id = -1);

 private:
  std::shared_ptr<fs::FileSystem> fs_;
  std::string dir_;
  std::optional<int64_t> damaged_latest_;
  std::string damage_;  // the Corruption message of the damaged latest entry
};

// "file:///a%20b/c.json" for "/a b/c.json" (RFC 3986: unreserved characters and '/' kept).
std::string PathToFileUri(const std::string& absolute_path);
// The inverse; InvalidArgument for a URI that is not file:.
Result<std::string> FileUriToPath(const std::string& uri);

}  // namespace sluice::sources
