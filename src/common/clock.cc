#include "common/clock.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace sluice {

int64_t SystemClock::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t SystemClock::WaitTillTime(int64_t target_ms, const std::atomic<bool>* stop) {
  int64_t now = NowMs();
  while (now < target_ms) {
    if (stop != nullptr && stop->load()) return now;
    int64_t slice = target_ms - now;
    if (stop != nullptr) slice = std::min(slice, kStopPollMs);
    std::this_thread::sleep_for(std::chrono::milliseconds(slice));
    now = NowMs();
  }
  return now;
}

std::shared_ptr<Clock> DefaultClock() {
  static const std::shared_ptr<Clock> clock = std::make_shared<SystemClock>();
  return clock;
}

int64_t MonotonicMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t ManualClock::NowMs() const {
  MutexLock lock(&mu_);
  return now_ms_;
}

int64_t ManualClock::WaitTillTime(int64_t target_ms, const std::atomic<bool>* stop) {
  MutexLock lock(&mu_);
  ++wait_calls_;
  if (auto_advance_) {
    now_ms_ = std::max(now_ms_, target_ms);
    cv_.SignalAll();
    return now_ms_;
  }
  ++waiters_;
  while (now_ms_ < target_ms && !(stop != nullptr && stop->load())) {
    cv_.WaitForMs(&mu_, kStopPollMs);
  }
  --waiters_;
  return now_ms_;
}

void ManualClock::Advance(int64_t ms) {
  MutexLock lock(&mu_);
  if (ms > 0) now_ms_ += ms;
  cv_.SignalAll();
}

void ManualClock::SetTime(int64_t ms) {
  MutexLock lock(&mu_);
  now_ms_ = std::max(now_ms_, ms);
  cv_.SignalAll();
}

int ManualClock::waiters() const {
  MutexLock lock(&mu_);
  return waiters_;
}

int64_t ManualClock::wait_calls() const {
  MutexLock lock(&mu_);
  return wait_calls_;
}

}  // namespace sluice
