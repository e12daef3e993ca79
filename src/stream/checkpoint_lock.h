// CheckpointLock: two running queries can never share a checkpoint.
//
// The lock is an flock(2)-ed file <checkpoint>/lock on the local file system. flock belongs to
// the open file description, so the kernel releases it when the holder closes it or dies in any
// way (kill -9 included): a crashed query never leaves a stale lock. While holding it, the
// holder keeps one line of JSON in the file naming itself,
//   {"pid":4242,"host":"worker-1","queryId":"<uuid>","runId":"<uuid>",
//    "startTime":"2026-11-30T09:00:00.000Z"}
// so that a refused starter can say who holds it. The file itself is never deleted (deleting a
// lock file while others may have it open would let two holders coexist); on release its content
// is truncated.
//
// On object storage (s3://) there is no lock to take: S3 has no flock and no lease that a killed
// holder gives back. There Acquire takes the flock of <LocalCacheDirFor(checkpoint)>/lock
// (fs/local_cache.h), so that two runs on one machine are refused at once as on a local disk,
// records the holder in <checkpoint>/lock on S3 (a plain PUT, for messages), warns when that
// record names another run that did not release, and does not refuse a run of another machine:
// what keeps two writers of one checkpoint apart on S3 is that every
// log entry (offsets/<N>, commits/<N>, sources/...) and every new state file is created with a
// conditional write (If-None-Match: *), so of two runs that plan the same batch exactly one can
// write offsets/<N>; the other fails with Conflict at that write, at the latest one batch after
// it started (docs/storage.md "Two writers of one checkpoint on S3" has the argument).
// flock is also taken between two acquirers in one process (they open separate descriptions).
// A child forked (without exec) while the lock is held shares the holder's description and so
// the lock until it exits; the descriptor is O_CLOEXEC, so exec'd programs do not inherit it.
//
// Thread safety: Acquire and ReadHolder may be called from any thread. A CheckpointLock object is
// not synchronized: one owner releases it (Release or the destructor).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "fs/file_system.h"

namespace sluice::stream {

// Who holds (or wants) a checkpoint.
struct LockHolder {
  int64_t pid = 0;
  std::string host;
  std::string query_id;
  std::string run_id;
  int64_t start_time_ms = 0;  // when the run started, ms since the epoch

  bool operator==(const LockHolder&) const = default;

  // "pid 4242 on host worker-1, query id <uuid>, run id <uuid>, started 2026-...Z"
  std::string ToString() const;
};

// The calling process as a holder: getpid(), gethostname().
LockHolder CurrentProcessHolder(std::string query_id, std::string run_id, int64_t start_time_ms);

std::string SerializeLockHolder(const LockHolder& holder);
// Corruption when `text` is not the JSON written by SerializeLockHolder.
Result<LockHolder> ParseLockHolder(std::string_view text);

class CheckpointLock {
 public:
  struct Options {
    // While the lock is taken but no holder line is readable (the holder writes it right after
    // locking; an IsLocked probe holds the lock for an instant and writes none), Acquire keeps
    // retrying the lock for this long before reporting the holder as unknown.
    int64_t holder_read_timeout_ms = 200;
  };

  // Creates <checkpoint_root> if needed and takes the lock without waiting. When another query
  // holds it: Conflict "checkpoint <root> is in use by another query (<holder>) ...". I/O errors
  // name the lock file. On s3:// the lock is the local cache's (Conflict likewise) and `holder`
  // is recorded on S3 (see above); another scheme is refused by name (fs::FileSystemForPath).
  static Result<std::unique_ptr<CheckpointLock>> Acquire(const std::string& checkpoint_root,
                                                         const LockHolder& holder);
  static Result<std::unique_ptr<CheckpointLock>> Acquire(const std::string& checkpoint_root,
                                                         const LockHolder& holder,
                                                         const Options& options);

  // The holder recorded in <root>/lock: nullopt when the file is absent, empty (nobody holds
  // it, or the holder has not written yet) or unreadable. Does not tell whether the lock is
  // actually held; IsLocked does.
  static Result<std::optional<LockHolder>> ReadHolder(const std::string& checkpoint_root);
  // Whether some open file description holds the lock now (probes with a non-blocking flock).
  // NotSupported on s3://, where nothing can tell (see above).
  static Result<bool> IsLocked(const std::string& checkpoint_root);

  CheckpointLock(const CheckpointLock&) = delete;
  CheckpointLock& operator=(const CheckpointLock&) = delete;
  // Releases (ignoring errors) if still held.
  ~CheckpointLock();

  // Truncates the holder line and releases the lock. Idempotent. On s3:// it also empties the
  // record on S3 when it still names this holder.
  Status Release();

  const LockHolder& holder() const { return holder_; }
  const std::string& path() const { return path_; }
  bool held() const { return fd_ >= 0 || store_ != nullptr; }
  // True on object storage: only this machine is locked out, the record is only a record.
  bool record_only() const { return store_ != nullptr; }

 private:
  // The flock of <lock_dir>/lock; messages name `checkpoint_root`.
  static Result<std::unique_ptr<CheckpointLock>> AcquireFlock(const std::string& lock_dir,
                                                              const std::string& checkpoint_root,
                                                              const LockHolder& holder,
                                                              const Options& options);
  static Result<std::unique_ptr<CheckpointLock>> AcquireOnObjectStore(
      const std::string& checkpoint_root, const LockHolder& holder, const Options& options);
  CheckpointLock(int fd, std::string path, LockHolder holder)
      : fd_(fd), path_(std::move(path)), holder_(std::move(holder)) {}

  int fd_;  // -1 once released; on object storage the flock of the local cache's lock file
  std::string path_;
  LockHolder holder_;
  std::shared_ptr<fs::FileSystem> store_;  // object storage only; null once released
};

}  // namespace sluice::stream
