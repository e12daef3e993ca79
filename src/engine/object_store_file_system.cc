// DuckDB's file system over Sluice's object store file systems (object_store_file_system.h).
#include "engine/object_store_file_system.h"

#include <fnmatch.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "duckdb/common/file_system.hpp"
#include "duckdb/common/types/timestamp.hpp"
#include "fs/file_system.h"
#include "fs/s3_file_system.h"

namespace sluice::engine::internal {
namespace {

[[noreturn]] void Throw(const Status& st) {
  if (st.IsNotSupported()) throw duckdb::NotImplementedException(st.message());
  throw duckdb::IOException(st.message());
}

std::shared_ptr<fs::FileSystem> FileSystemOrThrow(const std::string& path) {
  Result<std::shared_ptr<fs::FileSystem>> fs = fs::FileSystemForPath(path);
  if (!fs.ok()) Throw(fs.status());
  return *fs;
}

class ObjectHandle final : public duckdb::FileHandle {
 public:
  ObjectHandle(duckdb::FileSystem& duck_fs, std::shared_ptr<fs::FileSystem> fs,
               const std::string& path, duckdb::FileOpenFlags flags, fs::FileInfo info)
      : FileHandle(duck_fs, path, flags), fs_(std::move(fs)), info_(std::move(info)) {}

  ~ObjectHandle() override = default;  // an unclosed write is dropped, never half-published

  void Close() override { Upload(); }

  // Reads [location, location + n) exactly; IOException naming the path otherwise.
  void ReadAt(char* out, int64_t n, int64_t location) {
    if (n <= 0) return;
    if (location < 0 || location + n > info_.size) {
      throw duckdb::IOException("reading " + path + ": bytes " + std::to_string(location) + "-" +
                                std::to_string(location + n) + " are past its end (" +
                                std::to_string(info_.size) + " bytes)");
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (flags.OpenForWriting()) {
      std::memcpy(out, data_.data() + location, static_cast<size_t>(n));
      return;
    }
    const bool in_window = location >= window_start_ &&
                           location + n <= window_start_ + static_cast<int64_t>(data_.size());
    if (!in_window) {
      int64_t start = location;
      int64_t length = std::max<int64_t>(n, kReadWindowBytes);
      if (info_.size <= kWholeObjectBytes) {
        start = 0;
        length = info_.size;
      }
      length = std::min(length, info_.size - start);
      Result<std::string> bytes = Fetch(start, length);
      if (!bytes.ok()) Throw(bytes.status());
      if (static_cast<int64_t>(bytes->size()) != length) {
        throw duckdb::IOException("reading " + path + ": asked for " + std::to_string(length) +
                                  " bytes at " + std::to_string(start) + ", got " +
                                  std::to_string(bytes->size()) +
                                  " (the object changed while it was read?)");
      }
      data_ = std::move(*bytes);
      window_start_ = start;
    }
    std::memcpy(out, data_.data() + (location - window_start_), static_cast<size_t>(n));
  }

  void WriteAt(const char* in, int64_t n, int64_t location) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!flags.OpenForWriting()) throw duckdb::IOException(path + " is not open for writing");
    const size_t end = static_cast<size_t>(location + n);
    if (data_.size() < end) data_.resize(end);
    std::memcpy(data_.data() + location, in, static_cast<size_t>(n));
    info_.size = static_cast<int64_t>(data_.size());
    dirty_ = true;
  }

  void Truncate(int64_t size) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!flags.OpenForWriting()) throw duckdb::IOException(path + " is not open for writing");
    data_.resize(static_cast<size_t>(size));
    info_.size = size;
    dirty_ = true;
  }

  // Publishes the written bytes (once per change): CreateIfAbsent for an exclusive create, an
  // atomic replace otherwise.
  void Upload() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!flags.OpenForWriting() || !dirty_) return;
    Status st = flags.ExclusiveCreate() ? fs_->CreateIfAbsent(path, data_)
                                        : fs_->AtomicReplace(path, data_);
    if (!st.ok()) Throw(st);
    dirty_ = false;
  }

  const fs::FileInfo& info() const { return info_; }
  int64_t position = 0;

 private:
  Result<std::string> Fetch(int64_t start, int64_t length) {
    if (auto* s3 = dynamic_cast<fs::S3FileSystem*>(fs_.get())) {
      return s3->ReadRange(path, start, length);
    }
    SLUICE_ASSIGN_OR_RETURN(std::string all, fs_->ReadFile(path));
    if (static_cast<int64_t>(all.size()) < start) return std::string();
    return all.substr(static_cast<size_t>(start), static_cast<size_t>(length));
  }

  std::shared_ptr<fs::FileSystem> fs_;
  fs::FileInfo info_;
  std::mutex mu_;
  std::string data_;  // writing: the whole file; reading: bytes from window_start_
  int64_t window_start_ = 0;
  bool dirty_ = false;
};

// The literal part of a glob before its first special character's segment: "s3://b/d/*.x" ->
// "s3://b/d".
std::string GlobRoot(const std::string& pattern) {
  size_t special = pattern.find_first_of("*?[");
  size_t slash = pattern.rfind('/', special);
  return slash == std::string::npos ? pattern : pattern.substr(0, slash);
}

class ObjectStoreFileSystem final : public duckdb::FileSystem {
 public:
  std::string GetName() const override { return "SluiceObjectStoreFileSystem"; }

  bool CanHandleFile(const std::string& path) override {
    std::string_view scheme = fs::PathScheme(path);
    return !scheme.empty() && scheme != "file";
  }
  bool IsManuallySet() override { return true; }
  bool CanSeek() override { return true; }
  bool OnDiskFile(duckdb::FileHandle&) override { return false; }

  duckdb::unique_ptr<duckdb::FileHandle> OpenFile(
      const std::string& path, duckdb::FileOpenFlags flags,
      duckdb::optional_ptr<duckdb::FileOpener>) override {
    std::shared_ptr<fs::FileSystem> fs = FileSystemOrThrow(path);
    fs::FileInfo info;
    info.path = path;
    if (flags.OpenForWriting()) {
      if (flags.OpenForAppending()) {
        throw duckdb::NotImplementedException("appending to " + path +
                                              ": objects are written whole");
      }
      return duckdb::make_uniq<ObjectHandle>(*this, std::move(fs), path, flags, std::move(info));
    }
    Result<fs::FileInfo> stat = fs->Stat(path);
    if (!stat.ok() && stat.status().IsNotFound() && flags.ReturnNullIfNotExists()) return nullptr;
    if (!stat.ok()) Throw(stat.status());
    if (stat->is_directory) throw duckdb::IOException("opening " + path + ": it is a directory");
    return duckdb::make_uniq<ObjectHandle>(*this, std::move(fs), path, flags, std::move(*stat));
  }

  void Read(duckdb::FileHandle& handle, void* buffer, int64_t nr_bytes,
            duckdb::idx_t location) override {
    Object(handle).ReadAt(static_cast<char*>(buffer), nr_bytes, static_cast<int64_t>(location));
  }
  int64_t Read(duckdb::FileHandle& handle, void* buffer, int64_t nr_bytes) override {
    ObjectHandle& h = Object(handle);
    int64_t n = std::max<int64_t>(0, std::min(nr_bytes, h.info().size - h.position));
    h.ReadAt(static_cast<char*>(buffer), n, h.position);
    h.position += n;
    return n;
  }
  void Write(duckdb::FileHandle& handle, void* buffer, int64_t nr_bytes,
             duckdb::idx_t location) override {
    Object(handle).WriteAt(static_cast<const char*>(buffer), nr_bytes,
                           static_cast<int64_t>(location));
  }
  int64_t Write(duckdb::FileHandle& handle, void* buffer, int64_t nr_bytes) override {
    ObjectHandle& h = Object(handle);
    h.WriteAt(static_cast<const char*>(buffer), nr_bytes, h.position);
    h.position += nr_bytes;
    return nr_bytes;
  }
  int64_t GetFileSize(duckdb::FileHandle& handle) override { return Object(handle).info().size; }
  duckdb::timestamp_t GetLastModifiedTime(duckdb::FileHandle& handle) override {
    return duckdb::Timestamp::FromEpochMs(Object(handle).info().mtime_ms);
  }
  duckdb::FileType GetFileType(duckdb::FileHandle&) override {
    return duckdb::FileType::FILE_TYPE_REGULAR;
  }
  void Truncate(duckdb::FileHandle& handle, int64_t new_size) override {
    Object(handle).Truncate(new_size);
  }
  void FileSync(duckdb::FileHandle& handle) override { Object(handle).Upload(); }
  void Seek(duckdb::FileHandle& handle, duckdb::idx_t location) override {
    Object(handle).position = static_cast<int64_t>(location);
  }
  void Reset(duckdb::FileHandle& handle) override { Object(handle).position = 0; }
  duckdb::idx_t SeekPosition(duckdb::FileHandle& handle) override {
    return static_cast<duckdb::idx_t>(Object(handle).position);
  }

  bool FileExists(const std::string& path, duckdb::optional_ptr<duckdb::FileOpener>) override {
    Result<fs::FileInfo> info = FileSystemOrThrow(path)->Stat(path);
    if (!info.ok() && info.status().IsNotFound()) return false;
    if (!info.ok()) Throw(info.status());
    return !info->is_directory;
  }
  bool DirectoryExists(const std::string& path, duckdb::optional_ptr<duckdb::FileOpener>) override {
    Result<fs::FileInfo> info = FileSystemOrThrow(path)->Stat(path);
    if (!info.ok() && info.status().IsNotFound()) return false;
    if (!info.ok()) Throw(info.status());
    return info->is_directory;
  }
  void CreateDirectory(const std::string& path, duckdb::optional_ptr<duckdb::FileOpener>) override {
    Status st = FileSystemOrThrow(path)->CreateDirectories(path);
    if (!st.ok()) Throw(st);
  }
  void RemoveDirectory(const std::string& path, duckdb::optional_ptr<duckdb::FileOpener>) override {
    Status st = FileSystemOrThrow(path)->DeleteRecursive(path);
    if (!st.ok()) Throw(st);
  }
  void RemoveFile(const std::string& path, duckdb::optional_ptr<duckdb::FileOpener>) override {
    Status st = FileSystemOrThrow(path)->DeleteFile(path);
    if (!st.ok()) Throw(st);
  }
  bool TryRemoveFile(const std::string& path, duckdb::optional_ptr<duckdb::FileOpener>) override {
    Status st = FileSystemOrThrow(path)->DeleteFile(path);
    if (st.IsNotFound()) return false;
    if (!st.ok()) Throw(st);
    return true;
  }
  void MoveFile(const std::string& source, const std::string& target,
                duckdb::optional_ptr<duckdb::FileOpener>) override {
    Status st = FileSystemOrThrow(source)->RenameNoReplace(source, target);
    if (!st.ok()) Throw(st);
  }
  bool ListFiles(const std::string& directory,
                 const std::function<void(const std::string&, bool)>& callback,
                 duckdb::FileOpener*) override {
    Result<std::vector<fs::FileInfo>> entries = FileSystemOrThrow(directory)->List(directory);
    if (!entries.ok() && entries.status().IsNotFound()) return false;
    if (!entries.ok()) Throw(entries.status());
    for (const fs::FileInfo& e : *entries) callback(fs::BaseName(e.path), e.is_directory);
    return true;
  }

  duckdb::vector<duckdb::OpenFileInfo> Glob(const std::string& pattern,
                                            duckdb::FileOpener*) override {
    duckdb::vector<duckdb::OpenFileInfo> out;
    if (!HasGlob(pattern)) {
      // Whether it exists is for OpenFile to say (one request fewer per file of a scan).
      out.emplace_back(pattern);
      return out;
    }
    const std::string root = GlobRoot(pattern);
    Result<std::vector<fs::FileInfo>> files = FileSystemOrThrow(root)->ListRecursive(root);
    if (!files.ok() && files.status().IsNotFound()) return out;
    if (!files.ok()) Throw(files.status());
    const int flags = pattern.find("**") != std::string::npos ? 0 : FNM_PATHNAME;
    for (const fs::FileInfo& f : *files) {
      if (::fnmatch(pattern.c_str(), f.path.c_str(), flags) == 0) out.emplace_back(f.path);
    }
    return out;
  }

 private:
  static ObjectHandle& Object(duckdb::FileHandle& handle) { return handle.Cast<ObjectHandle>(); }
};

}  // namespace

void RegisterObjectStoreFileSystem(duckdb::DatabaseInstance& db) {
  db.GetFileSystem().RegisterSubSystem(duckdb::make_uniq<ObjectStoreFileSystem>());
}

}  // namespace sluice::engine::internal
