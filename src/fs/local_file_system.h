// LocalFileSystem: FileSystem over POSIX calls on a local (Linux) file system.
//
// Guarantees (docs/fs.md has the full story):
// - CreateIfAbsent writes a hidden temporary file in the target's directory (TempPathFor), fsyncs
//   it when options.sync, then publishes it with renameat2(RENAME_NOREPLACE) (falling back to
//   link(2) + unlink of the temporary file where the file system lacks RENAME_NOREPLACE), and
//   fsyncs the directory. The kernel decides the race: exactly one of several creators, threads
//   or processes, wins; the others get AlreadyExists and remove their temporary file. An existing
//   target is never overwritten and never observed partial.
// - AtomicReplace: temporary file, fsync, rename(2), directory fsync.
// - With options.sync a successful create or replace survives power loss. Without it, it survives
//   a crash of the process but after power loss the file may be absent, empty or torn.
// - Directories created on the way (CreateIfAbsent, AtomicReplace, CreateDirectories) are made
//   durable by fsyncing their parents. RenameNoReplace fsyncs the directories involved.
//   Deletions are not synced.
// - Errors carry the operation and the path: FileOpError ("creating /x/y: No space left on
//   device").
//
// Thread safety: stateless; safe from any number of threads and processes.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fs/file_system.h"

namespace sluice::fs {

class PosixFileSystem final : public FileSystem {
 public:
  PosixFileSystem() = default;

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

namespace internal {
// Tests only: when true, the local file system publishes with link(2) + unlink(2) as if the file
// system lacked renameat2(RENAME_NOREPLACE). Process-wide; not for use while other threads write.
void ForceLinkFallbackForTesting(bool force);
}  // namespace internal

}  // namespace sluice::fs
