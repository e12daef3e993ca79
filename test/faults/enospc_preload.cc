// A full disk for one process, without root (issue 24 section 1): loaded with LD_PRELOAD into a
// `sluice run` by test/faults/fault_harness.py, it lets the process write
// SLUICE_FAULT_ENOSPC_AFTER_BYTES bytes to regular files in all, and then fails every further
// write to a regular file with ENOSPC, as the kernel does on a full file system: the write that
// crosses the limit writes the bytes that fit (a short write) and the next one fails;
// fallocate and posix_fallocate fail once the limit is reached. Writes to pipes, sockets,
// terminals and to descriptors 0-2 (stdout and stderr, often a log file) are not counted and
// never fail. Without the variable (or with a malformed
// value) nothing is changed.
//
// A test that loads it can also set a new limit and restart the count in-process with
// `extern "C" void sluice_enospc_reset(long long limit)` (found with dlsym; -1: no limit), e.g. to
// sweep limits in one process (src/state/rocksdb_full_disk_test.cc).
//
// Interposed: write, pwrite, pwrite64, writev, pwritev, fallocate, posix_fallocate (the calls
// Sluice's file systems, DuckDB's and RocksDB's make). glibc's stdio writes (fwrite, fprintf to a
// file) reach the kernel without these symbols and are not failed. Thread-safe (one atomic
// counter).
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace {

std::atomic<long long> written{0};  // bytes written to regular files so far

// The limit from the environment, read once: -1 when the variable is absent or malformed.
long long LimitFromEnvironment() {
  const char* v = std::getenv("SLUICE_FAULT_ENOSPC_AFTER_BYTES");
  if (v == nullptr || *v == '\0') return -1LL;
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  return (end != nullptr && *end == '\0' && n >= 0) ? n : -1LL;
}

std::atomic<long long>& LimitSlot() {
  static std::atomic<long long> limit{LimitFromEnvironment()};
  return limit;
}

long long Limit() { return LimitSlot().load(); }

bool IsRegular(int fd) {
  if (fd <= 2) return false;
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

// How many of `n` bytes to `fd` may be written: n, or fewer (what is left of the limit), or -1
// with errno = ENOSPC when nothing is left.
long long Allowance(int fd, size_t n) {
  const long long limit = Limit();
  if (limit < 0 || n == 0 || !IsRegular(fd)) return static_cast<long long>(n);
  const long long before = written.fetch_add(static_cast<long long>(n));
  if (before >= limit) {
    errno = ENOSPC;
    return -1;
  }
  const long long left = limit - before;
  return left < static_cast<long long>(n) ? left : static_cast<long long>(n);
}

bool Full(int fd) { return Limit() >= 0 && IsRegular(fd) && written.load() >= Limit(); }

size_t IovTotal(const struct iovec* iov, int cnt) {
  size_t n = 0;
  for (int i = 0; i < cnt; i++) n += iov[i].iov_len;
  return n;
}

template <typename F>
F Next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

// A new limit (-1: none), counted from now.
void sluice_enospc_reset(long long limit) {
  written.store(0);
  LimitSlot().store(limit < 0 ? -1 : limit);
}

ssize_t write(int fd, const void* buf, size_t n) {
  const long long ok = Allowance(fd, n);
  if (ok < 0) return -1;
  return Next<ssize_t (*)(int, const void*, size_t)>("write")(fd, buf, static_cast<size_t>(ok));
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  const long long ok = Allowance(fd, n);
  if (ok < 0) return -1;
  return Next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite")(fd, buf,
                                                                      static_cast<size_t>(ok), off);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off_t off) {
  const long long ok = Allowance(fd, n);
  if (ok < 0) return -1;
  return Next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite64")(
      fd, buf, static_cast<size_t>(ok), off);
}

// A vector write that crosses the limit fails whole (the kernel may also write a prefix; a
// caller must handle both).
ssize_t writev(int fd, const struct iovec* iov, int cnt) {
  const size_t n = IovTotal(iov, cnt);
  const long long ok = Allowance(fd, n);
  if (ok < 0 || static_cast<size_t>(ok) < n) {
    errno = ENOSPC;
    return -1;
  }
  return Next<ssize_t (*)(int, const struct iovec*, int)>("writev")(fd, iov, cnt);
}

ssize_t pwritev(int fd, const struct iovec* iov, int cnt, off_t off) {
  const size_t n = IovTotal(iov, cnt);
  const long long ok = Allowance(fd, n);
  if (ok < 0 || static_cast<size_t>(ok) < n) {
    errno = ENOSPC;
    return -1;
  }
  return Next<ssize_t (*)(int, const struct iovec*, int, off_t)>("pwritev")(fd, iov, cnt, off);
}

int fallocate(int fd, int mode, off_t off, off_t len) {
  if (Full(fd)) {
    errno = ENOSPC;
    return -1;
  }
  return Next<int (*)(int, int, off_t, off_t)>("fallocate")(fd, mode, off, len);
}

int posix_fallocate(int fd, off_t off, off_t len) {
  if (Full(fd)) return ENOSPC;
  return Next<int (*)(int, off_t, off_t)>("posix_fallocate")(fd, off, len);
}

}  // extern "C"
