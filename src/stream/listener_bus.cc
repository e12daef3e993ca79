#include "stream/listener_bus.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <type_traits>

#include "common/logging.h"

namespace sluice::stream {

ListenerBus::ListenerBus() : thread_([this] { Run(); }) {}

ListenerBus::~ListenerBus() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  thread_.join();
}

void ListenerBus::AddListener(std::shared_ptr<StreamingQueryListener> listener) {
  MutexLock lock(&mu_);
  listeners_.push_back(std::move(listener));
}

void ListenerBus::RemoveListener(const StreamingQueryListener* listener) {
  MutexLock lock(&mu_);
  std::erase_if(listeners_, [&](const auto& l) { return l.get() == listener; });
}

void ListenerBus::Post(Event event) {
  {
    MutexLock lock(&mu_);
    queue_.push_back(std::move(event));
    ++posted_;
  }
  cv_.SignalAll();
}

bool ListenerBus::WaitUntilEmpty(int64_t timeout_ms) {
  MutexLock lock(&mu_);
  const int64_t target = posted_;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (delivered_ < target) {
    if (!cv_.WaitUntil(&mu_, deadline)) return delivered_ >= target;
  }
  return true;
}

void ListenerBus::Run() {
  MutexLock lock(&mu_);
  for (;;) {
    while (!stop_ && queue_.empty()) cv_.Wait(&mu_);
    if (queue_.empty()) return;  // stop_ and drained
    Event event = std::move(queue_.front());
    queue_.pop_front();
    auto listeners = listeners_;
    lock.Unlock();
    for (const auto& l : listeners) {
      try {
        std::visit(
            [&](const auto& e) {
              using T = std::decay_t<decltype(e)>;
              if constexpr (std::is_same_v<T, QueryStartedEvent>) l->OnQueryStarted(e);
              if constexpr (std::is_same_v<T, QueryProgressEvent>) l->OnQueryProgress(e);
              if constexpr (std::is_same_v<T, QueryIdleEvent>) l->OnQueryIdle(e);
              if constexpr (std::is_same_v<T, QueryTerminatedEvent>) l->OnQueryTerminated(e);
            },
            event);
      } catch (const std::exception& e) {
        SLUICE_LOG(kWarning) << "a streaming query listener threw: " << e.what();
      } catch (...) {
        SLUICE_LOG(kWarning) << "a streaming query listener threw an exception";
      }
    }
    lock.Lock();
    ++delivered_;
    cv_.SignalAll();
  }
}

}  // namespace sluice::stream
