// FileSystem: the storage interface every layer above uses (Delta logs, checkpoints, data files).
//
// Paths are absolute or relative local paths for LocalFileSystem (S3 later: "s3://bucket/key").
// All methods return Status/Result; none throws.
//
// Thread safety: implementations must be safe for concurrent use from many threads and, for
// CreateIfAbsent, from many processes: it is the primitive on which Delta commits and streaming
// checkpoint logs rely (exactly one of several racing creators wins).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/status.h"

namespace sluice::fs {

struct FileInfo {
  std::string path;            // full path as passed in + the entry's name
  int64_t size = 0;            // bytes; 0 for directories
  int64_t mtime_ms = 0;        // last modification time, milliseconds since the epoch
  bool is_directory = false;
};

struct WriteOptions {
  // fsync the file (and, for creates and renames, its directory) before returning. Durability
  // of logs and commits depends on this; tests and benchmarks may turn it off.
  bool sync = true;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Writes `data` to `path` only if `path` does not exist, atomically: readers never see a
  // partial file, and when several writers race exactly one succeeds; the others get
  // AlreadyExists and leave no trace. Parent directories are created as needed.
  virtual Status CreateIfAbsent(const std::string& path, std::string_view data,
                                const WriteOptions& options = {}) = 0;

  // Writes `data` to `path`, atomically replacing any existing file (temp file + rename).
  virtual Status AtomicReplace(const std::string& path, std::string_view data,
                               const WriteOptions& options = {}) = 0;

  // Reads the whole file. NotFound when absent.
  virtual Result<std::string> ReadFile(const std::string& path) = 0;

  // Entries directly inside `dir` whose name starts with `name_prefix`, sorted by name.
  // NotFound when `dir` does not exist. Never includes "." or "..".
  virtual Result<std::vector<FileInfo>> List(const std::string& dir,
                                             std::string_view name_prefix = "") = 0;

  // Files (not directories) under `dir` at any depth, sorted by path.
  virtual Result<std::vector<FileInfo>> ListRecursive(const std::string& dir) = 0;

  virtual Result<FileInfo> Stat(const std::string& path) = 0;
  virtual Result<bool> Exists(const std::string& path) = 0;

  // Deletes a file. NotFound when absent.
  virtual Status DeleteFile(const std::string& path) = 0;
  // Deletes a directory and everything below it; OK when absent.
  virtual Status DeleteRecursive(const std::string& dir) = 0;
  // Creates `dir` and its parents; OK when it exists.
  virtual Status CreateDirectories(const std::string& dir) = 0;
  // Renames, failing with AlreadyExists instead of overwriting `to`.
  virtual Status RenameNoReplace(const std::string& from, const std::string& to) = 0;
  // Sets the modification time (tests of timestamp time travel need it).
  virtual Status SetModificationTime(const std::string& path, int64_t mtime_ms) = 0;
};

// The process-wide local file system. Never null; lives for the whole process.
std::shared_ptr<FileSystem> LocalFileSystem();

// Joins path parts with a single '/': JoinPath("a/", "b") == "a/b".
std::string JoinPath(std::string_view a, std::string_view b);

}  // namespace sluice::fs
