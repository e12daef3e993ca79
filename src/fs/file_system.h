// FileSystem: the storage interface every layer above uses (Delta logs, checkpoints, data files).
//
// Paths are absolute or relative local paths for LocalFileSystem, "s3://bucket/key" for
// S3FileSystem (s3_file_system.h); FileSystemForPath picks the one that serves a path.
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
  std::string path;      // full path as passed in + the entry's name
  int64_t size = 0;      // bytes; 0 for directories
  int64_t mtime_ms = 0;  // last modification time, milliseconds since the epoch
  bool is_directory = false;
};

struct WriteOptions {
  // fsync the file (and, for creates and renames, its directory) before returning. Durability
  // of logs and commits depends on this; tests and benchmarks may turn it off.
  bool sync = true;
  // Create the file readable and writable by its owner only (mode 0600, whatever the umask):
  // files that may hold secrets, such as streaming table definitions. Default: 0666 & ~umask.
  bool owner_only = false;
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
  // Makes the contents of the existing file `path` durable (fsync), for files written by other
  // means than this interface (e.g. the engine's Parquet writer) before they are published. The
  // directory entry is not synced (RenameNoReplace and CreateIfAbsent sync theirs). NotFound
  // when absent. The default returns OK: storage where a completed write is durable (object
  // stores) and test file systems need nothing more.
  virtual Status SyncFile(const std::string& path);
  // Makes the entries of the existing directory `dir` durable (fsync of the directory), for files
  // created in it by other means than this interface (the engine's Parquet writer writes data
  // files under their final names): once SyncFile(file) and then SyncDirectory(its directory)
  // have returned, the file survives a crash with its contents. NotFound when absent. The
  // default returns OK (as SyncFile's).
  virtual Status SyncDirectory(const std::string& dir);

  // Two-phase CreateIfAbsent, so that the slow part of a create (writing and, with
  // options.sync, fsyncing the contents) can run before, or on another thread while, whatever
  // must precede the file's appearance:
  //   PrepareCreate writes `data` (durably with options.sync) where no reader looks; nothing
  //     appears under `path`. Parent directories are created as needed.
  //   PublishCreate then makes it appear under `path` atomically, exactly as CreateIfAbsent
  //     would: AlreadyExists (and the prepared file dropped) when `path` exists; with
  //     options.sync the name is durable when it returns. A PreparedFile is published at most
  //     once.
  //   AbandonCreate drops a prepared file that will not be published (best effort, no error).
  // A crash between the phases leaves at most a temporary file (IsTempFileName). The defaults
  // keep the bytes in memory and call CreateIfAbsent at publish time, so file systems that do
  // not override them (object stores, test wrappers) behave exactly as with CreateIfAbsent.
  // Thread safety: as the other methods; one PreparedFile is used by one thread at a time.
  struct PreparedFile {
    std::string path;       // the final name
    std::string temp_path;  // where the bytes are now; empty for the defaults
    std::string data;       // the bytes, kept by the defaults only
  };
  virtual Result<PreparedFile> PrepareCreate(const std::string& path, std::string_view data,
                                             const WriteOptions& options = {});
  virtual Status PublishCreate(const PreparedFile& file, const WriteOptions& options = {});
  virtual void AbandonCreate(const PreparedFile& file);

  // A named crash point (see crash_point.h and docs/fs.md). Upper layers call it at the places
  // where a crash matters ("stream.after_offsets_write"):
  //   SLUICE_RETURN_NOT_OK(fs_->MaybeCrash("stream.after_offsets_write"));
  // The default ends the process with _exit(kCrashExitCode) when the environment variable
  // SLUICE_CRASH_AT names this point, and otherwise returns OK. FaultInjectingFileSystem
  // overrides it to simulate the crash in-process: it returns Cancelled("injected crash at
  // <point>") and fails every later operation the same way.
  // Thread safety: as the other methods.
  virtual Status MaybeCrash(std::string_view point);
};

// The operations of FileSystem, for error messages and fault injection.
enum class FileOp : int {
  kCreateIfAbsent = 0,
  kAtomicReplace,
  kReadFile,
  kList,
  kListRecursive,
  kStat,
  kExists,
  kDeleteFile,
  kDeleteRecursive,
  kCreateDirectories,
  kRenameNoReplace,
  kSetModificationTime,
};
inline constexpr int kNumFileOps = 12;

// The verb that begins error messages of `op`: "creating", "replacing", "reading", "listing",
// "listing recursively", "getting status of", "checking existence of", "deleting",
// "deleting recursively", "creating directory", "renaming", "setting modification time of".
std::string_view FileOpVerb(FileOp op);

// The Status every implementation returns when the operating system reports `err` for `op` on
// `path`: "<verb> <path>: <strerror(err)>", e.g. "creating /t/_delta_log/00.json: No space left
// on device". The code is NotFound for ENOENT, AlreadyExists for EEXIST, IOError otherwise.
// FaultInjectingFileSystem uses it so that injected errors read exactly like real ones.
Status FileOpError(FileOp op, std::string_view path, int err);

// Temporary files. CreateIfAbsent and AtomicReplace write a hidden temporary file in the target's
// directory first, named ".<target name>.<unique>.tmp". After a crash such files may remain;
// they are never the final name of anything. Listings (List, ListRecursive) return them like any
// other file: callers that list logs skip them with IsTempFileName (or a name prefix that cannot
// start with '.'), and cleanup (VACUUM) may delete them once they are old.
//
// True for a name (not a path) of the temporary-file form: begins with '.' and ends with ".tmp".
bool IsTempFileName(std::string_view name);
// A fresh temporary path next to `path` (same directory), unique across threads and processes
// with overwhelming probability. Thread-safe.
std::string TempPathFor(std::string_view path);

// The process-wide local file system. Never null; lives for the whole process.
std::shared_ptr<FileSystem> LocalFileSystem();

// The scheme of `path` ("s3" for "s3://b/k"), or "" for a local path. A path has a scheme when
// it starts with a letter followed by at least one letter, digit, '+', '-' or '.' and then ':'
// (Hadoop's rule, without one-letter drive names): "gs://b", "file:/x" and "my:t" do.
std::string_view PathScheme(std::string_view path);

// The file system that serves `path`: LocalFileSystem() for a path without a scheme, the
// process-wide S3FileSystem (s3_file_system.h, configured from the environment) for "s3://".
// Every other scheme is refused by name: NotSupported("'gs://b/t': scheme 'gs' is not supported
// (Sluice reads local paths and s3://)"), so that no local directory named "gs:" is created.
// Thread-safe. docs/s3.md.
Result<std::shared_ptr<FileSystem>> FileSystemForPath(std::string_view path);

// Joins path parts with a single '/': JoinPath("a/", "b") == "a/b", JoinPath("a", "/b") == "a/b",
// JoinPath("/", "b") == "/b"; an empty part yields the other one.
std::string JoinPath(std::string_view a, std::string_view b);

// The directory part of `path` without the trailing '/': DirName("a/b/c") == "a/b",
// DirName("c") == ".", DirName("/c") == "/". Trailing slashes of `path` are ignored.
std::string DirName(std::string_view path);
// The last component of `path`: BaseName("a/b/c") == "c", BaseName("a/b/") == "b".
std::string BaseName(std::string_view path);

}  // namespace sluice::fs
