// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable as capability types, so
// that the lock contracts written with common/thread_annotations.h (SLUICE_GUARDED_BY,
// SLUICE_REQUIRES, ...) are checked by clang's -Wthread-safety. Under g++ they are
// std::mutex and std::condition_variable with nothing added.
//
//   mutable Mutex mu_;
//   CondVar cv_;
//   std::deque<int> queue_ SLUICE_GUARDED_BY(mu_);
//   ...
//   MutexLock lock(&mu_);
//   while (queue_.empty()) cv_.Wait(&mu_);  // a loop, not a predicate lambda: the analysis
//                                           // checks the loop, not a lambda's body
//
// Thread safety: a Mutex is not recursive; a MutexLock and its Mutex belong to one thread while
// held. Signal/SignalAll may be called from any thread, with or without the lock. None of them is
// copyable or movable.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "common/thread_annotations.h"

namespace sluice {

class SLUICE_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() SLUICE_ACQUIRE() { mu_.lock(); }
  void Unlock() SLUICE_RELEASE() { mu_.unlock(); }
  // Tells the analysis that the lock is held where it cannot see that (no run-time check).
  void AssertHeld() const SLUICE_ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` from construction to destruction; Unlock and Lock release and retake it in between
// (the destructor releases it only when held).
class SLUICE_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) SLUICE_ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() SLUICE_RELEASE() {
    if (held_) mu_->Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() SLUICE_RELEASE() {
    held_ = false;
    mu_->Unlock();
  }
  void Lock() SLUICE_ACQUIRE() {
    mu_->Lock();
    held_ = true;
  }

 private:
  Mutex* const mu_;
  bool held_ = true;
};

// A condition variable; each wait names the Mutex it releases (the caller holds it), so that the
// analysis checks the caller.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases *mu while waiting and holds it again on return. May return without a signal
  // (spuriously): callers wait in a loop over their condition.
  void Wait(Mutex* mu) SLUICE_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // As Wait, for at most `timeout_ms` (>= 0); false when it returned because the time ran out.
  bool WaitForMs(Mutex* mu, int64_t timeout_ms) SLUICE_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool signalled =
        cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms)) == std::cv_status::no_timeout;
    lock.release();
    return signalled;
  }
  // As Wait, until `deadline` (steady clock); false when it returned because it was reached.
  bool WaitUntil(Mutex* mu, std::chrono::steady_clock::time_point deadline) SLUICE_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool signalled = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return signalled;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace sluice
