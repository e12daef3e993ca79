// RoutingFileSystem: one FileSystem for every path a user may give, which hands each call to the
// file system that serves the path's scheme (FileSystemForPath, file_system.h): local paths to
// LocalFileSystem(), "s3://" to the process-wide S3FileSystem, and any other scheme ("s3a:",
// "gs:", "abfss:", ...) refused by name with NotSupported, so that no local directory called
// "gs:" is ever created (docs/s3.md "Where s3:// works").
//
// - Each call routes by its own path: a table on S3 and a checkpoint on a local disk can be used
//   through one RoutingFileSystem. RenameNoReplace between two file systems is NotSupported.
// - PrepareCreate/PublishCreate/AbandonCreate go to the file system of the prepared file's final
//   path; SyncFile, SyncDirectory and MaybeCrash to the path's (MaybeCrash: the local one).
// - Errors are those of the file system that served the call; a refused scheme's error names
//   the path and the scheme.
//
// Thread safety: stateless; safe from any number of threads (as the file systems it routes to).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fs/file_system.h"

namespace sluice::fs {

class RoutingFileSystem final : public FileSystem {
 public:
  RoutingFileSystem() = default;

  Status CreateIfAbsent(const std::string& path, std::string_view data,
                        const WriteOptions& options = {}) override;
  Status AtomicReplace(const std::string& path, std::string_view data,
                       const WriteOptions& options = {}) override;
  Result<std::string> ReadFile(const std::string& path) override;
  Result<std::vector<FileInfo>> List(const std::string& dir,
                                     std::string_view name_prefix = "") override;
  Result<std::vector<FileInfo>> ListRecursive(const std::string& dir) override;
  Result<FileInfo> Stat(const std::string& path) override;
  Result<bool> Exists(const std::string& path) override;
  Status DeleteFile(const std::string& path) override;
  Status DeleteRecursive(const std::string& dir) override;
  Status CreateDirectories(const std::string& dir) override;
  Status RenameNoReplace(const std::string& from, const std::string& to) override;
  Status SetModificationTime(const std::string& path, int64_t mtime_ms) override;
  Status SyncFile(const std::string& path) override;
  Status SyncDirectory(const std::string& dir) override;
  Result<PreparedFile> PrepareCreate(const std::string& path, std::string_view data,
                                     const WriteOptions& options = {}) override;
  Status PublishCreate(const PreparedFile& file, const WriteOptions& options = {}) override;
  void AbandonCreate(const PreparedFile& file) override;
};

// The process-wide RoutingFileSystem: the file system of the SQL session, the C++ API and the
// CLI's table commands. Never null; lives for the whole process.
std::shared_ptr<FileSystem> PathFileSystem();

}  // namespace sluice::fs
