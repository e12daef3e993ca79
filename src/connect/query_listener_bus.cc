#include "connect/query_listener_bus.h"

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "spark/connect/commands.pb.h"
#include "stream/time_format.h"

namespace sluice::connect {

namespace sc = spark::connect;

void QueryListenerBus::OnQueryProgress(const sluice::QueryProgressEvent& event) {
  Post({"{\"progress\":" + event.progress.Json() + "}", sc::QUERY_PROGRESS_EVENT});
}

void QueryListenerBus::OnQueryIdle(const sluice::QueryIdleEvent& event) {
  nlohmann::json j = {{"id", event.id}, {"runId", event.run_id}, {"timestamp", event.timestamp}};
  Post({j.dump(), sc::QUERY_IDLE_EVENT});
}

void QueryListenerBus::OnQueryTerminated(const sluice::QueryTerminatedEvent& event) {
  nlohmann::json j = {{"id", event.id},
                      {"runId", event.run_id},
                      {"exception", nullptr},
                      {"errorClassOnException", nullptr}};
  if (event.exception) j["exception"] = *event.exception;
  Post({j.dump(), sc::QUERY_TERMINATED_EVENT});
}

void QueryListenerBus::Post(Event event) {
  MutexLock lock(&mu_);
  if (!open_) return;
  queue_.push_back(std::move(event));
  cv_.SignalAll();
}

uint64_t QueryListenerBus::Open() {
  MutexLock lock(&mu_);
  ++generation_;
  open_ = true;
  queue_.clear();
  cv_.SignalAll();
  return generation_;
}

void QueryListenerBus::Close() {
  MutexLock lock(&mu_);
  open_ = false;
  queue_.clear();
  cv_.SignalAll();
}

bool QueryListenerBus::IsOpen() const {
  MutexLock lock(&mu_);
  return open_;
}

std::optional<std::vector<QueryListenerBus::Event>> QueryListenerBus::Next(
    uint64_t generation, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  while (open_ && generation_ == generation && queue_.empty()) {
    if (!cv_.WaitUntil(&mu_, deadline)) break;
  }
  if (!open_ || generation_ != generation) return std::nullopt;
  std::vector<Event> out(std::make_move_iterator(queue_.begin()),
                         std::make_move_iterator(queue_.end()));
  queue_.clear();
  return out;
}

std::string QueryListenerBus::StartedEventJson(const std::string& id, const std::string& run_id,
                                               const std::optional<std::string>& name) {
  const int64_t now_ms = WallClockMs();
  nlohmann::json j = {{"id", id},
                      {"runId", run_id},
                      {"name", nullptr},
                      {"timestamp", stream::FormatUtcTimestampMs(now_ms)},
                      {"jobTags", nlohmann::json::array()}};
  if (name) j["name"] = *name;
  return j.dump();
}

}  // namespace sluice::connect
