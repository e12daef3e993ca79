// FaultInjectingFileSystem: a FileSystem that forwards to another one and, on request, makes
// chosen operations fail, tear or crash. For tests of everything above src/fs (logs, commits,
// checkpoints, recovery); docs/fs.md describes the tools with examples.
//
// Three kinds of trouble:
// 1. Faults (InjectFault / FailNthWrite / TearNthWrite): the n-th operation that matches a rule
//    (operation kinds and a path substring) fails with an errno (EIO, ENOSPC, ...), returning
//    exactly the Status the local file system would (FileOpError), and changes nothing; or it is
//    torn or crashes (below).
// 2. Torn writes. CreateIfAbsent and AtomicReplace are atomic, so a write torn by a crash never
//    shows at the target: kTornWrite leaves a prefix of the bytes in a hidden temporary file next
//    to the target (what a process killed mid-write leaves), the target keeps its old state, and
//    the file system crashes. kTornPublish deliberately breaks atomicity: the target holds only a
//    prefix (what a store without atomic writes, or an unsynced write after power loss, may
//    leave), then the file system crashes. Use it to test readers that must cope with a torn
//    tail.
// 3. Crashes. Crash(point), an armed crash point reached through MaybeCrash, or a kCrashBefore /
//    kCrashAfter / torn fault puts the wrapper into the crashed state: the triggering call and
//    every later call return Cancelled("injected crash at <point>"), as if the process had died;
//    the base file system keeps whatever had reached it. Restart() leaves the crashed state, as a
//    restarted process would find the disk. With Options::exit_process_on_crash the wrapper
//    instead ends the real process (_exit(kCrashExitCode)), for tests that fork a child.
//
// Thread safety: all methods are safe to call concurrently. Operations run on the base file
// system outside the wrapper's lock, so an operation already in flight on another thread when a
// crash is triggered may still complete (as a write racing a kill -9 may).
// Ownership: shares ownership of the base file system.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fs/file_system.h"

namespace sluice::fs {

// A set of FileOp values.
using FileOpMask = uint32_t;
constexpr FileOpMask OpBit(FileOp op) { return FileOpMask{1} << static_cast<int>(op); }
// The operations that write file contents.
inline constexpr FileOpMask kWriteOps =
    OpBit(FileOp::kCreateIfAbsent) | OpBit(FileOp::kAtomicReplace);
// Every operation that changes the file system.
inline constexpr FileOpMask kMutatingOps =
    kWriteOps | OpBit(FileOp::kDeleteFile) | OpBit(FileOp::kDeleteRecursive) |
    OpBit(FileOp::kCreateDirectories) | OpBit(FileOp::kRenameNoReplace) |
    OpBit(FileOp::kSetModificationTime);
inline constexpr FileOpMask kAllOps = (FileOpMask{1} << kNumFileOps) - 1;

enum class FaultKind {
  kError,        // the operation fails with `error` and changes nothing
  kTornWrite,    // a prefix goes to a hidden temp file beside the target; target untouched; crash
  kTornPublish,  // the target holds a prefix of the data (non-atomic!); crash
  kCrashBefore,  // crash instead of performing the operation: nothing changes
  kCrashAfter,   // perform the operation, then crash: the change is made but Cancelled returns
};

struct Fault {
  FaultKind kind = FaultKind::kError;
  // The operations that count towards `nth`. Torn kinds apply to kWriteOps only.
  FileOpMask ops = kWriteOps;
  // Only operations whose path (either path, for a rename) contains this count; empty: all.
  std::string path_substring;
  // 1-based: the nth counted operation after InjectFault is hit.
  int64_t nth = 1;
  // When true every counted operation from the nth on is hit (a full disk stays full);
  // otherwise only the nth, and the fault is then spent. Crash kinds are always one-shot.
  bool sticky = false;
  // kError: the errno to report (EIO, ENOSPC, EACCES, EROFS, ...).
  int error = EIO;
  // Torn kinds: how many bytes of the data survive; nullopt means half of them (rounded down).
  // Clamped to the data size.
  std::optional<int64_t> torn_bytes;
};

class FaultInjectingFileSystem final : public FileSystem {
 public:
  struct Options {
    // When a crash is triggered, end the process with _exit(kCrashExitCode) (after one line to
    // stderr) instead of entering the crashed state. For tests that run a child process.
    bool exit_process_on_crash = false;
  };

  explicit FaultInjectingFileSystem(std::shared_ptr<FileSystem> base);
  FaultInjectingFileSystem(std::shared_ptr<FileSystem> base, Options options);

  // --- faults -------------------------------------------------------------------------------
  // Arms a fault; several may be armed at once (each counts from when it was armed; when two hit
  // the same operation, the one armed first wins). InvalidArgument for nth < 1, an empty `ops`,
  // error <= 0 for kError, or a torn kind whose `ops` has no write operation.
  Status InjectFault(Fault fault);
  // Shorthands: the nth write (CreateIfAbsent/AtomicReplace) whose path contains
  // `path_substring` fails with `error`; is torn (kTornWrite, or kTornPublish when `publish`).
  void FailNthWrite(int64_t nth, int error = EIO, std::string path_substring = "");
  void TearNthWrite(int64_t nth, std::string path_substring = "", bool publish = false,
                    std::optional<int64_t> torn_bytes = std::nullopt);
  // Disarms all faults (crash points stay).
  void ClearFaults();
  // How many armed faults have not yet fired (sticky ones count while armed).
  int PendingFaults() const;

  // --- crash points -------------------------------------------------------------------------
  // Arms `point`: the `hit`-th MaybeCrash(point) from now (1 = the next) crashes.
  void SetCrashPoint(std::string point, int64_t hit = 1);
  void ClearCrashPoints();
  // Crashes now, as if the process died at `point`.
  void Crash(std::string_view point);
  bool crashed() const;
  // Leaves the crashed state: the disk (the base file system) is as the crash left it.
  // Armed faults and crash points are kept.
  void Restart();
  // Distinct crash point names passed to MaybeCrash, in the order first reached (a crash test can
  // run a workload once to learn its points, then crash at each in turn).
  std::vector<std::string> ReachedCrashPoints() const;
  int64_t CrashPointHits(std::string_view point) const;

  // --- counters -------------------------------------------------------------------------------
  // Calls of `op` made on this wrapper so far, including failed ones.
  int64_t OpCount(FileOp op) const;

  const std::shared_ptr<FileSystem>& base() const { return base_; }

  // --- FileSystem -----------------------------------------------------------------------------
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
  // Forwards to the base (not an injectable operation).
  Status SyncFile(const std::string& path) override;
  // Crashes when `point` is armed here; otherwise forwards to the base (SLUICE_CRASH_AT).
  Status MaybeCrash(std::string_view point) override;

 private:
  struct ArmedFault {
    Fault fault;
    int64_t seen = 0;
  };
  // What an operation must do, decided under the lock before it runs.
  struct Decision {
    Status status;  // non-OK: return it without touching the base (crashed, error, crash before)
    std::optional<FaultKind> kind;  // a fault that fired and is acted on by the caller
    int64_t torn_bytes = 0;
  };

  Decision Begin(FileOp op, std::string_view path, std::string_view path2 = {},
                 int64_t data_size = 0);
  Status CrashLocked(std::string point);  // requires mu_
  Status CrashAfter(FileOp op, std::string_view path);
  Status Write(FileOp op, const std::string& path, std::string_view data,
               const WriteOptions& options);
  Status CancelledStatus() const;  // requires mu_

  const std::shared_ptr<FileSystem> base_;
  const Options options_;

  mutable std::mutex mu_;
  std::vector<ArmedFault> faults_;                            // guarded by mu_
  std::map<std::string, int64_t, std::less<>> crash_points_;  // point -> hits left; mu_
  std::map<std::string, int64_t, std::less<>> point_hits_;    // mu_
  std::vector<std::string> reached_points_;                   // mu_
  bool crashed_ = false;                                      // mu_
  std::string crash_point_;                                   // mu_
  std::atomic<int64_t> op_counts_[kNumFileOps] = {};
};

}  // namespace sluice::fs
