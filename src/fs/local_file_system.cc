#include "fs/local_file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>

namespace sluice::fs {

namespace {

// --- small POSIX helpers; each returns 0 or an errno value --------------------------------------

int WriteAll(int fd, std::string_view data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;  // no progress on a regular file: treat as an I/O error
    p += n;
    left -= static_cast<size_t>(n);
  }
  return 0;
}

int FsyncFd(int fd) {
  while (::fsync(fd) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

// fsyncs a directory so that entries created, renamed or linked in it are durable. File systems
// that cannot fsync directories report EINVAL; that is not an error.
int SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = FsyncFd(fd);
  ::close(fd);
  return err == EINVAL ? 0 : err;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

int MkdirOne(const std::string& dir, bool sync) {
  if (::mkdir(dir.c_str(), 0777) == 0) return sync ? SyncDir(DirName(dir)) : 0;
  int err = errno;
  if (err == EEXIST) return IsDirectory(dir) ? 0 : ENOTDIR;
  return err;
}

// mkdir -p. With `sync`, the parent of every directory created is fsynced.
int MakeDirs(const std::string& dir, bool sync) {
  if (dir.empty() || dir == "/" || dir == ".") return 0;
  int err = MkdirOne(dir, sync);
  if (err != ENOENT) return err;
  err = MakeDirs(DirName(dir), sync);
  if (err != 0) return err;
  return MkdirOne(dir, sync);
}

int64_t MtimeMs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
}

FileInfo MakeInfo(std::string path, const struct stat& st) {
  FileInfo info;
  info.path = std::move(path);
  info.is_directory = S_ISDIR(st.st_mode);
  info.size = info.is_directory ? 0 : static_cast<int64_t>(st.st_size);
  info.mtime_ms = MtimeMs(st);
  return info;
}

// Writes `data` to a fresh temporary file next to `path` (creating the parent directories when
// missing), fsyncs it when `options.sync`, mode 0600 when `options.owner_only`. On success *temp
// names the file; on failure nothing is left.
int WriteTempFile(const std::string& path, std::string_view data, const WriteOptions& options,
                  std::string* temp) {
  const bool sync = options.sync;
  int fd = -1;
  bool made_dirs = false;
  for (int attempt = 0; attempt < 16; ++attempt) {
    *temp = TempPathFor(path);
    fd = ::open(temp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                options.owner_only ? 0600 : 0666);
    if (fd >= 0) break;
    int err = errno;
    if (err == EEXIST || err == EINTR) continue;  // name collision: draw another name
    if (err == ENOENT && !made_dirs) {
      made_dirs = true;
      int derr = MakeDirs(DirName(path), sync);
      if (derr != 0) return derr;
      continue;
    }
    return err;
  }
  if (fd < 0) return EEXIST;
  int err = WriteAll(fd, data);
  if (err == 0 && sync) err = FsyncFd(fd);
  if (::close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
  if (err != 0) ::unlink(temp->c_str());
  return err;
}

bool RenameNoReplaceUnsupported(int err) {
  // ENOTSUP and EOPNOTSUPP are one value on Linux, two on other systems.
  // NOLINTNEXTLINE(misc-redundant-expression): see above
  return err == EINVAL || err == ENOSYS || err == ENOTSUP || err == EOPNOTSUPP;
}

std::atomic<bool> g_force_link_fallback{false};

// Moves `from` to `to` unless `to` exists (EEXIST). Uses renameat2(RENAME_NOREPLACE); where the
// file system lacks it, link(2) + unlink(2) (files only).
int RenameNoReplaceRaw(const std::string& from, const std::string& to) {
  if (!g_force_link_fallback.load(std::memory_order_relaxed)) {
    if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
    int err = errno;
    if (!RenameNoReplaceUnsupported(err)) return err;
  }
  if (::link(from.c_str(), to.c_str()) != 0) return errno;
  ::unlink(from.c_str());
  return 0;
}

int ReadAll(const std::string& path, std::string* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return err;
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return EISDIR;
  }
  out->clear();
  size_t capacity = static_cast<size_t>(st.st_size) + 1;  // +1 to see EOF without a resize
  out->resize(capacity);
  size_t used = 0;
  int err = 0;
  for (;;) {
    if (used == out->size()) out->resize(out->size() * 2);
    ssize_t n = ::read(fd, out->data() + used, out->size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  ::close(fd);
  out->resize(used);
  return err;
}

// Reads the names in `dir` (without "." and ".."). On error returns errno.
// Appends the names in `dir` that start with `name_prefix` (never "." or ".."), unsorted.
int ReadDirNames(const std::string& dir, std::vector<std::string>* names,
                 std::string_view name_prefix = "") {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return errno;
  int err = 0;
  for (;;) {
    errno = 0;
    struct dirent* e = ::readdir(d);
    if (e == nullptr) {
      err = errno;
      break;
    }
    std::string_view name(e->d_name);
    if (name == "." || name == "..") continue;
    if (name.substr(0, name_prefix.size()) != name_prefix) continue;
    names->emplace_back(name);
  }
  ::closedir(d);
  return err;
}

int ListRecursiveInto(const std::string& dir, bool top, std::vector<FileInfo>* out,
                      std::string* failed_path) {
  std::vector<std::string> names;
  int err = ReadDirNames(dir, &names);
  if (err != 0) {
    if (!top && (err == ENOENT || err == ENOTDIR)) return 0;  // removed while we walked
    *failed_path = dir;
    return err;
  }
  for (const std::string& name : names) {
    std::string path = JoinPath(dir, name);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;
      *failed_path = path;
      return errno;
    }
    if (S_ISDIR(st.st_mode)) {
      err = ListRecursiveInto(path, false, out, failed_path);
      if (err != 0) return err;
      continue;
    }
    if (S_ISLNK(st.st_mode)) {
      // Symbolic links to files count as files; links to directories are not followed (cycles).
      if (::stat(path.c_str(), &st) != 0) continue;
    }
    if (S_ISREG(st.st_mode)) out->push_back(MakeInfo(std::move(path), st));
  }
  return 0;
}

int RemoveTree(const std::string& path, std::string* failed_path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return 0;
    *failed_path = path;
    return errno;
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      *failed_path = path;
      return errno;
    }
    return 0;
  }
  std::vector<std::string> names;
  int err = ReadDirNames(path, &names);
  if (err == ENOENT) return 0;
  if (err != 0) {
    *failed_path = path;
    return err;
  }
  for (const std::string& name : names) {
    err = RemoveTree(JoinPath(path, name), failed_path);
    if (err != 0) return err;
  }
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT) {
    *failed_path = path;
    return errno;
  }
  return 0;
}

Status EmptyPath(FileOp op) {
  return Status::InvalidArgument(std::string(FileOpVerb(op)) + " an empty path");
}

}  // namespace

Status PosixFileSystem::CreateIfAbsent(const std::string& path, std::string_view data,
                                       const WriteOptions& options) {
  constexpr FileOp kOp = FileOp::kCreateIfAbsent;
  if (path.empty()) return EmptyPath(kOp);
  // Cheap early exit; the publishing step below is what decides races.
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) return FileOpError(kOp, path, EEXIST);

  std::string temp;
  int err = WriteTempFile(path, data, options, &temp);
  if (err != 0) return FileOpError(kOp, path, err);

  err = RenameNoReplaceRaw(temp, path);
  if (err != 0) {
    ::unlink(temp.c_str());
    return FileOpError(kOp, path, err);
  }
  if (options.sync) {
    err = SyncDir(DirName(path));
    if (err != 0) return FileOpError(kOp, path, err);
  }
  return Status::OK();
}

Status PosixFileSystem::AtomicReplace(const std::string& path, std::string_view data,
                                      const WriteOptions& options) {
  constexpr FileOp kOp = FileOp::kAtomicReplace;
  if (path.empty()) return EmptyPath(kOp);
  std::string temp;
  int err = WriteTempFile(path, data, options, &temp);
  if (err != 0) return FileOpError(kOp, path, err);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    err = errno;
    ::unlink(temp.c_str());
    return FileOpError(kOp, path, err);
  }
  if (options.sync) {
    err = SyncDir(DirName(path));
    if (err != 0) return FileOpError(kOp, path, err);
  }
  return Status::OK();
}

Result<std::string> PosixFileSystem::ReadFile(const std::string& path) {
  std::string data;
  int err = ReadAll(path, &data);
  if (err != 0) return FileOpError(FileOp::kReadFile, path, err);
  return data;
}

Result<std::vector<FileInfo>> PosixFileSystem::List(const std::string& dir,
                                                    std::string_view name_prefix) {
  constexpr FileOp kOp = FileOp::kList;
  std::vector<std::string> names;
  int err = ReadDirNames(dir, &names, name_prefix);
  if (err != 0) return FileOpError(kOp, dir, err);
  std::sort(names.begin(), names.end());
  std::vector<FileInfo> out;
  out.reserve(names.size());
  for (const std::string& name : names) {
    std::string path = JoinPath(dir, name);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;  // deleted or renamed since readdir
      return FileOpError(kOp, path, errno);
    }
    out.push_back(MakeInfo(std::move(path), st));
  }
  return out;
}

Result<std::vector<FileInfo>> PosixFileSystem::ListRecursive(const std::string& dir) {
  std::vector<FileInfo> out;
  std::string failed_path;
  int err = ListRecursiveInto(dir, /*top=*/true, &out, &failed_path);
  if (err != 0) return FileOpError(FileOp::kListRecursive, failed_path, err);
  std::sort(out.begin(), out.end(),
            [](const FileInfo& a, const FileInfo& b) { return a.path < b.path; });
  return out;
}

Result<FileInfo> PosixFileSystem::Stat(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return FileOpError(FileOp::kStat, path, errno);
  return MakeInfo(path, st);
}

Result<bool> PosixFileSystem::Exists(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return FileOpError(FileOp::kExists, path, errno);
}

Status PosixFileSystem::DeleteFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return FileOpError(FileOp::kDeleteFile, path, errno);
  return Status::OK();
}

Status PosixFileSystem::DeleteRecursive(const std::string& dir) {
  if (dir.empty()) return EmptyPath(FileOp::kDeleteRecursive);
  std::string failed_path;
  int err = RemoveTree(dir, &failed_path);
  if (err == 0) return Status::OK();
  std::string where = dir;
  if (failed_path != dir) where += " (at " + failed_path + ")";
  return FileOpError(FileOp::kDeleteRecursive, where, err);
}

Status PosixFileSystem::CreateDirectories(const std::string& dir) {
  if (dir.empty()) return EmptyPath(FileOp::kCreateDirectories);
  int err = MakeDirs(dir, /*sync=*/true);
  if (err != 0) return FileOpError(FileOp::kCreateDirectories, dir, err);
  return Status::OK();
}

Status PosixFileSystem::RenameNoReplace(const std::string& from, const std::string& to) {
  int err = RenameNoReplaceRaw(from, to);
  if (err == 0) {
    std::string to_dir = DirName(to);
    std::string from_dir = DirName(from);
    err = SyncDir(to_dir);
    if (err == 0 && from_dir != to_dir) err = SyncDir(from_dir);
  }
  if (err != 0) return FileOpError(FileOp::kRenameNoReplace, from + " to " + to, err);
  return Status::OK();
}

Status PosixFileSystem::SyncFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FileOpError(FileOp::kReadFile, path, errno);
  int err = FsyncFd(fd);
  ::close(fd);
  if (err != 0) return Status::FromErrno(err, "fsync of " + path);
  return Status::OK();
}

Status PosixFileSystem::SyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return FileOpError(FileOp::kReadFile, dir, errno);
  int err = FsyncFd(fd);
  ::close(fd);
  if (err != 0 && err != EINVAL) return Status::FromErrno(err, "fsync of directory " + dir);
  return Status::OK();
}

Result<FileSystem::PreparedFile> PosixFileSystem::PrepareCreate(const std::string& path,
                                                                std::string_view data,
                                                                const WriteOptions& options) {
  constexpr FileOp kOp = FileOp::kCreateIfAbsent;
  if (path.empty()) return EmptyPath(kOp);
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) return FileOpError(kOp, path, EEXIST);
  PreparedFile file;
  file.path = path;
  int err = WriteTempFile(path, data, options, &file.temp_path);
  if (err != 0) return FileOpError(kOp, path, err);
  return file;
}

Status PosixFileSystem::PublishCreate(const PreparedFile& file, const WriteOptions& options) {
  constexpr FileOp kOp = FileOp::kCreateIfAbsent;
  if (file.temp_path.empty()) return FileSystem::PublishCreate(file, options);
  int err = RenameNoReplaceRaw(file.temp_path, file.path);
  if (err != 0) {
    ::unlink(file.temp_path.c_str());
    return FileOpError(kOp, file.path, err);
  }
  if (options.sync) {
    err = SyncDir(DirName(file.path));
    if (err != 0) return FileOpError(kOp, file.path, err);
  }
  return Status::OK();
}

void PosixFileSystem::AbandonCreate(const PreparedFile& file) {
  if (!file.temp_path.empty()) ::unlink(file.temp_path.c_str());
}

Status PosixFileSystem::SetModificationTime(const std::string& path, int64_t mtime_ms) {
  struct timespec times[2];
  times[0].tv_sec = 0;
  times[0].tv_nsec = UTIME_OMIT;  // leave the access time alone
  int64_t sec = mtime_ms / 1000;
  int64_t ms = mtime_ms % 1000;
  if (ms < 0) {  // floor division for times before the epoch
    ms += 1000;
    sec -= 1;
  }
  times[1].tv_sec = static_cast<time_t>(sec);
  times[1].tv_nsec = static_cast<long>(ms * 1000000);
  if (::utimensat(AT_FDCWD, path.c_str(), times, 0) != 0) {
    return FileOpError(FileOp::kSetModificationTime, path, errno);
  }
  return Status::OK();
}

namespace internal {
void ForceLinkFallbackForTesting(bool force) { g_force_link_fallback.store(force); }
}  // namespace internal

std::shared_ptr<FileSystem> LocalFileSystem() {
  // Never destroyed: other static objects may use it during exit.
  static const auto* const fs =
      new std::shared_ptr<FileSystem>(std::make_shared<PosixFileSystem>());
  return *fs;
}

}  // namespace sluice::fs
