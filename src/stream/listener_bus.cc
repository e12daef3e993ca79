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
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void ListenerBus::AddListener(std::shared_ptr<StreamingQueryListener> listener) {
  std::lock_guard<std::mutex> lock(mu_);
  listeners_.push_back(std::move(listener));
}

void ListenerBus::RemoveListener(const StreamingQueryListener* listener) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(listeners_, [&](const auto& l) { return l.get() == listener; });
}

void ListenerBus::Post(Event event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(event));
    ++posted_;
  }
  cv_.notify_all();
}

bool ListenerBus::WaitUntilEmpty(int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  int64_t target = posted_;
  return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                      [&] { return delivered_ >= target; });
}

void ListenerBus::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and drained
    Event event = std::move(queue_.front());
    queue_.pop_front();
    auto listeners = listeners_;
    lock.unlock();
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
    lock.lock();
    ++delivered_;
    cv_.notify_all();
  }
}

}  // namespace sluice::stream
