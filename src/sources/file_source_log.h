// FileSourceLog: the file source's record of the files each of its batches read, in
// <checkpoint>/sources/<i>/ (Spark's FileStreamSourceLog, without compaction).
//
// Entry <N> is the file "<N>" (decimal, no extension):
//   v1
//   {"path":"file:///landing/a.json","timestamp":1700000000000,"batchId":0}
//   {"path":"file:///landing/b.json","timestamp":1700000000500,"batchId":0}
// lines joined by "\n", no trailing newline; one JSON line per file in the order the files are
// read; `timestamp` is the file's modification time (ms), `batchId` = N. N is the log's own
// batch id (the source offset {"logOffset":N}), not the query's batch id.
// Entries are written with create-if-absent: an existing entry means another query writes the
// same checkpoint (Conflict). Names that are not canonical decimals are ignored (temporary
// files, "_schemas/"); "<N>.compact" files (Spark compaction) are not read (NotSupported).
#pragma once

#include <cstdint>
#include <memory>
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

  // Writes entry `batch_id`. Conflict when it exists already.
  Status Add(int64_t batch_id, const std::vector<FileEntry>& entries);
  // Reads entry `batch_id`. NotFound when absent; Corruption naming the file when malformed.
  Result<std::vector<FileEntry>> Get(int64_t batch_id);
  // The entry ids present, ascending: 0..N. An empty list when the directory does not exist;
  // Corruption naming the missing entry when there is a gap (a damaged log).
  Result<std::vector<int64_t>> ListIds();

  const std::string& dir() const { return dir_; }

  static std::string Serialize(const std::vector<FileEntry>& entries);
  static Result<std::vector<FileEntry>> Parse(const std::string& text, const std::string& file);

 private:
  std::shared_ptr<fs::FileSystem> fs_;
  std::string dir_;
};

// "file:///a%20b/c.json" for "/a b/c.json" (RFC 3986: unreserved characters and '/' kept).
std::string PathToFileUri(const std::string& absolute_path);
// The inverse; InvalidArgument for a URI that is not file:.
Result<std::string> FileUriToPath(const std::string& uri);

}  // namespace sluice::sources
