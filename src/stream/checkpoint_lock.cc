#include "stream/checkpoint_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/logging.h"
#include "fs/file_system.h"
#include "fs/local_cache.h"
#include "stream/checkpoint_layout.h"
#include "stream/json_util.h"
#include "stream/time_format.h"

namespace sluice::stream {

namespace {

// flock without waiting; 0, EWOULDBLOCK or another errno.
int TryFlock(int fd, int op) {
  while (::flock(fd, op | LOCK_NB) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

Result<std::string> ReadAllFd(int fd, const std::string& path) {
  std::string out;
  char buf[4096];
  off_t offset = 0;
  while (true) {
    ssize_t n = ::pread(fd, buf, sizeof(buf), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "reading " + path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    offset += n;
    if (out.size() > (1 << 16)) break;  // a holder line is short; do not read a huge foreign file
  }
  return out;
}

Status WriteHolderLine(int fd, const std::string& path, const LockHolder& holder) {
  const std::string line = SerializeLockHolder(holder) + "\n";
  if (::ftruncate(fd, 0) != 0) return Status::FromErrno(errno, "truncating " + path);
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::pwrite(fd, line.data() + done, line.size() - done, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "writing " + path);
    }
    done += static_cast<size_t>(n);
  }
  return Status::OK();
}

Result<int> OpenLockFile(const std::string& checkpoint_root, const std::string& path) {
  SLUICE_RETURN_NOT_OK_CTX(fs::LocalFileSystem()->CreateDirectories(checkpoint_root),
                           "creating checkpoint directory for its lock");
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno(errno, "opening checkpoint lock file " + path);
  return fd;
}

// The holder named by the record `text`; nullopt when it is empty or not a holder line.
std::optional<LockHolder> HolderOfRecord(std::string_view text) {
  Result<LockHolder> parsed = ParseLockHolder(text);
  if (!parsed.ok()) return std::nullopt;
  return *parsed;
}

// The file system of a checkpoint on object storage (a path with a scheme); other schemes than
// s3:// are refused by name.
Result<std::shared_ptr<fs::FileSystem>> ObjectStoreOf(const std::string& checkpoint_root) {
  SLUICE_ASSIGN_OR_RETURN_CTX(std::shared_ptr<fs::FileSystem> store,
                              fs::FileSystemForPath(checkpoint_root),
                              "checkpoint location '" + checkpoint_root + "'");
  return store;
}

}  // namespace

Result<std::unique_ptr<CheckpointLock>> CheckpointLock::AcquireOnObjectStore(
    const std::string& checkpoint_root, const LockHolder& holder, const Options& options) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<fs::FileSystem> store, ObjectStoreOf(checkpoint_root));
  // Two runs on this machine are refused at once, as on a local disk: they would share the
  // local cache (fs/local_cache.h), whose working directories the lock's owner reclaims.
  SLUICE_ASSIGN_OR_RETURN(
      std::unique_ptr<CheckpointLock> local,
      AcquireFlock(fs::LocalCacheDirFor(checkpoint_root), checkpoint_root, holder, options));
  const std::string path = LockPath(checkpoint_root);
  Result<std::string> previous = store->ReadFile(path);
  if (previous.ok()) {
    if (std::optional<LockHolder> other = HolderOfRecord(*previous)) {
      SLUICE_LOG(kWarning)
          << "checkpoint " << checkpoint_root << ": its holder record names " << other->ToString()
          << ", which did not release it (killed, or still running elsewhere). Object storage "
             "has no lock: if that query still runs, the first of the two to write its next "
             "batch's offsets wins and the other stops with a conflict (docs/storage.md)";
    }
  } else if (!previous.status().IsNotFound()) {
    return previous.status().WithContext("reading the checkpoint's holder record");
  }
  SLUICE_RETURN_NOT_OK_CTX(store->AtomicReplace(path, SerializeLockHolder(holder) + "\n"),
                           "recording the checkpoint's holder");
  std::unique_ptr<CheckpointLock> out(new CheckpointLock(local->fd_, path, holder));
  local->fd_ = -1;  // the flock moves to `out`
  out->store_ = std::move(store);
  return out;
}

std::string LockHolder::ToString() const {
  return "pid " + std::to_string(pid) + " on host " + (host.empty() ? "?" : host) + ", query id " +
         (query_id.empty() ? "?" : query_id) + ", run id " + (run_id.empty() ? "?" : run_id) +
         ", started " + FormatUtcTimestampMs(start_time_ms);
}

LockHolder CurrentProcessHolder(std::string query_id, std::string run_id, int64_t start_time_ms) {
  LockHolder h;
  h.pid = static_cast<int64_t>(::getpid());
  char host[HOST_NAME_MAX + 1] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) h.host = host;
  h.query_id = std::move(query_id);
  h.run_id = std::move(run_id);
  h.start_time_ms = start_time_ms;
  return h;
}

std::string SerializeLockHolder(const LockHolder& holder) {
  nlohmann::ordered_json j;
  j["pid"] = holder.pid;
  j["host"] = holder.host;
  j["queryId"] = holder.query_id;
  j["runId"] = holder.run_id;
  j["startTime"] = FormatUtcTimestampMs(holder.start_time_ms);
  return DumpJson(j);
}

Result<LockHolder> ParseLockHolder(std::string_view text) {
  return CatchJsonExceptions("checkpoint lock holder", [&]() -> Result<LockHolder> {
    nlohmann::ordered_json j = ParseJsonNoThrow(text);
    if (j.is_discarded() || !j.is_object()) {
      return Status::Corruption("checkpoint lock holder is not a JSON object");
    }
    auto str = [&](const char* key, std::string* out) {
      auto it = j.find(key);
      if (it == j.end() || !it->is_string()) return false;
      *out = it->get<std::string>();
      return true;
    };
    LockHolder h;
    std::string start;
    auto pid = j.find("pid");
    if (pid == j.end() || !pid->is_number_integer() || !str("host", &h.host) ||
        !str("queryId", &h.query_id) || !str("runId", &h.run_id) || !str("startTime", &start)) {
      return Status::Corruption(
          "checkpoint lock holder lacks pid, host, queryId, runId or startTime");
    }
    h.pid = pid->get<int64_t>();
    Result<int64_t> start_ms = ParseUtcTimestampMs(start);
    if (!start_ms.ok()) return Status::Corruption(start_ms.status().message());
    h.start_time_ms = *start_ms;
    return h;
  });
}

Result<std::unique_ptr<CheckpointLock>> CheckpointLock::Acquire(const std::string& checkpoint_root,
                                                                const LockHolder& holder) {
  return Acquire(checkpoint_root, holder, Options{});
}

Result<std::unique_ptr<CheckpointLock>> CheckpointLock::Acquire(const std::string& checkpoint_root,
                                                                const LockHolder& holder,
                                                                const Options& options) {
  if (!fs::PathScheme(checkpoint_root).empty()) {
    return AcquireOnObjectStore(checkpoint_root, holder, options);
  }
  return AcquireFlock(checkpoint_root, checkpoint_root, holder, options);
}

Result<std::unique_ptr<CheckpointLock>> CheckpointLock::AcquireFlock(
    const std::string& lock_dir, const std::string& checkpoint_root, const LockHolder& holder,
    const Options& options) {
  const std::string path = LockPath(lock_dir);
  SLUICE_ASSIGN_OR_RETURN(int fd, OpenLockFile(lock_dir, path));
  // When the lock is taken, name the holder. A holder writes its line right after locking, and a
  // probe (IsLocked) holds a shared lock for an instant without a line: so while no holder line
  // is readable, the lock is retried for a short while before giving up.
  std::optional<LockHolder> other;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options.holder_read_timeout_ms);
  while (true) {
    int err = TryFlock(fd, LOCK_EX);
    if (err == 0) {
      Status st = WriteHolderLine(fd, path, holder);
      if (!st.ok()) {
        ::close(fd);  // closing releases the lock
        return st;
      }
      return std::unique_ptr<CheckpointLock>(new CheckpointLock(fd, path, holder));
    }
    if (err != EWOULDBLOCK) {
      ::close(fd);
      return Status::FromErrno(err, "locking checkpoint lock file " + path);
    }
    Result<std::string> text = ReadAllFd(fd, path);
    if (text.ok()) {
      Result<LockHolder> parsed = ParseLockHolder(*text);
      if (parsed.ok()) {
        other = *parsed;
        break;
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::close(fd);
  std::string who = other.has_value() ? other->ToString() : "holder details not readable";
  return Status::Conflict("checkpoint " + checkpoint_root + " is in use by another query (" + who +
                          "; lock file " + path +
                          "): two running queries can never share a checkpoint; stop the other "
                          "query or use another checkpoint location");
}

Result<std::optional<LockHolder>> CheckpointLock::ReadHolder(const std::string& checkpoint_root) {
  const std::string path = LockPath(checkpoint_root);
  if (!fs::PathScheme(checkpoint_root).empty()) {
    SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<fs::FileSystem> store, ObjectStoreOf(checkpoint_root));
    Result<std::string> text = store->ReadFile(path);
    if (text.status().IsNotFound()) return std::optional<LockHolder>();
    if (!text.ok()) return text.status();
    return HolderOfRecord(*text);
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<LockHolder>();
    return Status::FromErrno(errno, "opening checkpoint lock file " + path);
  }
  Result<std::string> text = ReadAllFd(fd, path);
  ::close(fd);
  if (!text.ok()) return text.status();
  Result<LockHolder> parsed = ParseLockHolder(*text);
  if (!parsed.ok()) return std::optional<LockHolder>();
  return std::optional<LockHolder>(*parsed);
}

Result<bool> CheckpointLock::IsLocked(const std::string& checkpoint_root) {
  const std::string path = LockPath(checkpoint_root);
  if (!fs::PathScheme(checkpoint_root).empty()) {
    SLUICE_RETURN_NOT_OK(ObjectStoreOf(checkpoint_root).status());
    return Status::NotSupported("checkpoint " + checkpoint_root +
                                ": whether a query holds a checkpoint on object storage cannot be "
                                "told (there is no lock there; docs/storage.md)");
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return false;
    return Status::FromErrno(errno, "opening checkpoint lock file " + path);
  }
  // A shared probe conflicts with the holder's exclusive lock only.
  int err = TryFlock(fd, LOCK_SH);
  ::close(fd);  // releases the probe
  if (err == 0) return false;
  if (err == EWOULDBLOCK) return true;
  return Status::FromErrno(err, "probing checkpoint lock file " + path);
}

CheckpointLock::~CheckpointLock() {
  Status st = Release();
  (void)st;
}

Status CheckpointLock::Release() {
  Status st;
  if (store_ != nullptr) {
    std::shared_ptr<fs::FileSystem> store = std::move(store_);
    store_ = nullptr;
    // Only a record that still names this holder is emptied: a later starter's stays.
    Result<std::string> text = store->ReadFile(path_);
    if (!text.ok()) {
      if (!text.status().IsNotFound()) st = text.status();
    } else if (std::optional<LockHolder> recorded = HolderOfRecord(*text);
               recorded && *recorded == holder_) {
      st = store->AtomicReplace(path_, "").WithContext("emptying the checkpoint's holder record");
    }
  }
  if (fd_ < 0) return st;
  // The local lock file's holder line: truncated on a local disk and in the local cache alike.
  if (::ftruncate(fd_, 0) != 0 && st.ok()) {
    st = Status::FromErrno(errno, "truncating the lock file of " + path_);
  }
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
  fd_ = -1;
  return st;
}

}  // namespace sluice::stream
