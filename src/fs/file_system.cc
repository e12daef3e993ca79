#include "fs/file_system.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>

#include "fs/crash_point.h"
#include "fs/s3_file_system.h"

namespace sluice::fs {

Status FileSystem::MaybeCrash(std::string_view point) {
  MaybeCrashProcess(point);
  return Status::OK();
}

Status FileSystem::SyncFile(const std::string& /*path*/) { return Status::OK(); }

Status FileSystem::SyncDirectory(const std::string& /*dir*/) { return Status::OK(); }

Result<FileSystem::PreparedFile> FileSystem::PrepareCreate(const std::string& path,
                                                           std::string_view data,
                                                           const WriteOptions& /*options*/) {
  PreparedFile file;
  file.path = path;
  file.data.assign(data);
  return file;
}

Status FileSystem::PublishCreate(const PreparedFile& file, const WriteOptions& options) {
  return CreateIfAbsent(file.path, file.data, options);
}

void FileSystem::AbandonCreate(const PreparedFile& /*file*/) {}

std::string_view FileOpVerb(FileOp op) {
  switch (op) {
    case FileOp::kCreateIfAbsent:
      return "creating";
    case FileOp::kAtomicReplace:
      return "replacing";
    case FileOp::kReadFile:
      return "reading";
    case FileOp::kList:
      return "listing";
    case FileOp::kListRecursive:
      return "listing recursively";
    case FileOp::kStat:
      return "getting status of";
    case FileOp::kExists:
      return "checking existence of";
    case FileOp::kDeleteFile:
      return "deleting";
    case FileOp::kDeleteRecursive:
      return "deleting recursively";
    case FileOp::kCreateDirectories:
      return "creating directory";
    case FileOp::kRenameNoReplace:
      return "renaming";
    case FileOp::kSetModificationTime:
      return "setting modification time of";
  }
  return "accessing";
}

Status FileOpError(FileOp op, std::string_view path, int err) {
  std::string msg(FileOpVerb(op));
  msg += ' ';
  msg.append(path);
  msg += ": ";
  msg += std::strerror(err);
  switch (err) {
    case ENOENT:
      return Status::NotFound(std::move(msg));
    case EEXIST:
      return Status::AlreadyExists(std::move(msg));
    default:
      return Status::IOError(std::move(msg));
  }
}

bool IsTempFileName(std::string_view name) {
  constexpr std::string_view kSuffix = ".tmp";
  return name.size() > kSuffix.size() && name.front() == '.' &&
         name.substr(name.size() - kSuffix.size()) == kSuffix;
}

namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t ProcessSeed() {
  static const uint64_t seed = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  return seed;
}

}  // namespace

std::string TempPathFor(std::string_view path) {
  static std::atomic<uint64_t> counter{0};
  // A forked child inherits seed and counter, so the pid and the clock go into the mix too.
  const uint64_t n = counter.fetch_add(1, std::memory_order_relaxed);
  const uint64_t pid = static_cast<uint64_t>(::getpid());
  const uint64_t now =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const uint64_t r = SplitMix64(ProcessSeed() ^ SplitMix64(n) ^ (pid << 40) ^ now);
  std::string base = BaseName(path);
  // Keep the whole name under NAME_MAX (255).
  if (base.size() > 200) base.resize(200);
  char unique[64];
  std::snprintf(unique, sizeof(unique), ".%llu-%llu-%016llx.tmp",
                static_cast<unsigned long long>(pid), static_cast<unsigned long long>(n),
                static_cast<unsigned long long>(r));
  std::string name = "." + base + unique;
  std::string dir = DirName(path);
  // Keep relative paths relative ("x" -> ".x.1-2-ab.tmp", not "./.x...").
  bool has_dir = path.find('/') != std::string_view::npos;
  return has_dir ? JoinPath(dir, name) : name;
}

std::string JoinPath(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  while (a.size() > 1 && a.back() == '/') a.remove_suffix(1);
  while (!b.empty() && b.front() == '/') b.remove_prefix(1);
  std::string out(a);
  if (out != "/") out += '/';
  out.append(b);
  return out;
}

namespace {
std::string_view StripTrailingSlashes(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return path;
}
}  // namespace

std::string DirName(std::string_view path) {
  path = StripTrailingSlashes(path);
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  std::string_view dir = path.substr(0, slash);
  dir = StripTrailingSlashes(dir);
  if (dir.empty()) return "/";
  return std::string(dir);
}

std::string BaseName(std::string_view path) {
  path = StripTrailingSlashes(path);
  if (path == "/") return "/";
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return std::string(path);
  return std::string(path.substr(slash + 1));
}

std::string_view PathScheme(std::string_view path) {
  auto is_alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (path.empty() || !is_alpha(path[0])) return {};
  for (size_t i = 1; i < path.size(); ++i) {
    char c = path[i];
    if (c == ':') return i >= 2 ? path.substr(0, i) : std::string_view();
    bool ok = is_alpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
    if (!ok) return {};
  }
  return {};
}

Result<std::shared_ptr<FileSystem>> FileSystemForPath(std::string_view path) {
  std::string_view scheme = PathScheme(path);
  if (scheme.empty()) return LocalFileSystem();
  if (scheme == "s3") {
    if (path.substr(0, 5) != "s3://") {
      return Status::InvalidArgument("'" + std::string(path) + "': an S3 path is s3://bucket/key");
    }
    return DefaultS3FileSystem();
  }
  return Status::NotSupported("'" + std::string(path) + "': scheme '" + std::string(scheme) +
                              "' is not supported (Sluice reads local paths and s3://)");
}

}  // namespace sluice::fs
