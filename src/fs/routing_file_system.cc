#include "fs/routing_file_system.h"

namespace sluice::fs {

Status RoutingFileSystem::CreateIfAbsent(const std::string& path, std::string_view data,
                                         const WriteOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, FileSystemForPath(path));
  return fs->CreateIfAbsent(path, data, options);
}

Status RoutingFileSystem::AtomicReplace(const std::string& path, std::string_view data,
                                        const WriteOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, FileSystemForPath(path));
  return fs->AtomicReplace(path, data, options);
}

Result<std::string> RoutingFileSystem::ReadFile(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, FileSystemForPath(path));
  return fs->ReadFile(path);
}

Result<std::vector<FileInfo>> RoutingFileSystem::List(const std::string& dir,
                                                      std::string_view name_prefix) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, FileSystemForPath(dir));
  return fs->List(dir, name_prefix);
}

Result<std::vector<FileInfo>> RoutingFileSystem::ListRecursive(const std::string& dir) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, FileSystemForPath(dir));
  return fs->ListRecursive(dir);
}

Result<FileInfo> RoutingFileSystem::Stat(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, FileSystemForPath(path));
  return fs->Stat(path);
}

Result<bool> RoutingFileSystem::Exists(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, FileSystemForPath(path));
  return fs->Exists(path);
}

Status RoutingFileSystem::DeleteFile(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, FileSystemForPath(path));
  return fs->DeleteFile(path);
}

Status RoutingFileSystem::DeleteRecursive(const std::string& dir) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, FileSystemForPath(dir));
  return fs->DeleteRecursive(dir);
}

Status RoutingFileSystem::CreateDirectories(const std::string& dir) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, FileSystemForPath(dir));
  return fs->CreateDirectories(dir);
}

Status RoutingFileSystem::RenameNoReplace(const std::string& from, const std::string& to) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> from_fs, FileSystemForPath(from));
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> to_fs, FileSystemForPath(to));
  if (from_fs != to_fs) {
    return Status::NotSupported("renaming " + from + " to " + to +
                                ": the two paths are on different file systems");
  }
  return from_fs->RenameNoReplace(from, to);
}

Status RoutingFileSystem::SetModificationTime(const std::string& path, int64_t mtime_ms) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, FileSystemForPath(path));
  return fs->SetModificationTime(path, mtime_ms);
}

Status RoutingFileSystem::SyncFile(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, FileSystemForPath(path));
  return fs->SyncFile(path);
}

Status RoutingFileSystem::SyncDirectory(const std::string& dir) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, FileSystemForPath(dir));
  return fs->SyncDirectory(dir);
}

Result<FileSystem::PreparedFile> RoutingFileSystem::PrepareCreate(const std::string& path,
                                                                  std::string_view data,
                                                                  const WriteOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, FileSystemForPath(path));
  return fs->PrepareCreate(path, data, options);
}

Status RoutingFileSystem::PublishCreate(const PreparedFile& file, const WriteOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, FileSystemForPath(file.path));
  return fs->PublishCreate(file, options);
}

void RoutingFileSystem::AbandonCreate(const PreparedFile& file) {
  Result<std::shared_ptr<FileSystem>> fs = FileSystemForPath(file.path);
  if (fs.ok()) (*fs)->AbandonCreate(file);
}

std::shared_ptr<FileSystem> PathFileSystem() {
  // Never destroyed: other static objects may use it during exit.
  static const auto* const fs =
      new std::shared_ptr<FileSystem>(std::make_shared<RoutingFileSystem>());
  return *fs;
}

}  // namespace sluice::fs
