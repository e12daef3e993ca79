// MonitorListener: the StreamingQueryListener that feeds the monitoring server's QueryStore
// (query_store.h) with the events of every query: started, progress, idle, terminated.
//
// Registered on a stream::ListenerBus, its callbacks run on the bus's thread (never on a query's
// thread), one at a time; the store's mutex makes them safe against the HTTP handlers reading it.
//
// Ownership: borrows the store, which must outlive the listener's registration.
#pragma once

#include <cstdint>
#include <functional>

#include "server/query_store.h"
#include "stream/listener_bus.h"

namespace sluice::server {

// Milliseconds since the epoch from the system clock.
int64_t SystemNowMs();

class MonitorListener : public stream::StreamingQueryListener {
 public:
  // `now_ms` gives the wall clock at which an event is applied (tests inject theirs).
  explicit MonitorListener(QueryStore* store, std::function<int64_t()> now_ms = SystemNowMs)
      : store_(store), now_ms_(std::move(now_ms)) {}

  void OnQueryStarted(const stream::QueryStartedEvent& event) override;
  void OnQueryProgress(const stream::QueryProgressEvent& event) override;
  void OnQueryIdle(const stream::QueryIdleEvent& event) override;
  void OnQueryTerminated(const stream::QueryTerminatedEvent& event) override;

 private:
  QueryStore* store_;
  std::function<int64_t()> now_ms_;
};

}  // namespace sluice::server
