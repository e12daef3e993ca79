#include "common/clock.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <thread>

#include "common/strings.h"

namespace sluice {

namespace {

constexpr int64_t kSkewRereadMs = 50;

// The test skew of WallClockMs (its header comment): the file's last value, re-read lazily.
int64_t TestClockSkewMs() {
  static const char* const path = std::getenv("SLUICE_TEST_CLOCK_SKEW_FILE");
  if (path == nullptr || *path == '\0') return 0;
  static std::atomic<int64_t> skew_ms{0};
  static std::atomic<int64_t> read_at_ms{std::numeric_limits<int64_t>::min()};
  static std::atomic<bool> reported{false};
  const int64_t now = MonotonicMs();
  const int64_t last = read_at_ms.load(std::memory_order_relaxed);
  if (last != std::numeric_limits<int64_t>::min() && now - last < kSkewRereadMs) {
    return skew_ms.load(std::memory_order_relaxed);
  }
  read_at_ms.store(now, std::memory_order_relaxed);
  std::ifstream in(path);
  if (!in) {
    skew_ms.store(0, std::memory_order_relaxed);
    return 0;
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string trimmed = Trim(text);
  int64_t value = 0;
  const auto [end, err] = std::from_chars(trimmed.data(), trimmed.data() + trimmed.size(), value);
  if (err != std::errc() || end != trimmed.data() + trimmed.size() || trimmed.empty()) {
    if (!reported.exchange(true)) {
      std::fprintf(stderr, "sluice: SLUICE_TEST_CLOCK_SKEW_FILE %s: '%s' is not milliseconds\n",
                   path, trimmed.c_str());
    }
    return skew_ms.load(std::memory_order_relaxed);
  }
  skew_ms.store(value, std::memory_order_relaxed);
  return value;
}

}  // namespace

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
             .count() +
         TestClockSkewMs();
}

int64_t SystemClock::NowMs() const { return WallClockMs(); }

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
