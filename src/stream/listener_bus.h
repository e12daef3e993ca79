// StreamingQueryListener and the bus that delivers its events (Spark's StreamingQueryListener +
// StreamingQueryListenerBus): onQueryStarted, onQueryProgress, onQueryIdle, onQueryTerminated.
//
// Events are queued by the query thread and delivered on the bus's own thread, in the order they
// were posted, so a slow listener never slows a query (the queue grows instead). For one query,
// Started comes first and Terminated last.
//
// A listener that throws is logged and skipped for that event; the bus keeps running.
// Ownership: the bus shares ownership of its listeners. Thread safety: every method of
// ListenerBus is thread-safe; a listener's callbacks run on the bus thread only, one at a time.
// Lock discipline: one mutex guards the queue, the listeners and the counters
// (SLUICE_GUARDED_BY); no public method may be called with it held, and the bus thread releases
// it while listeners run (so a listener may call AddListener, RemoveListener or Post).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "common/mutex.h"
#include "sluice/query_types.h"
#include "stream/progress.h"

namespace sluice::stream {

// Started, idle and terminated are the public events (sluice/query_types.h); the progress event
// carries the engine's whole progress record (the public one is made from it: its Json()).
using ::sluice::QueryIdleEvent;
using ::sluice::QueryStartedEvent;
using ::sluice::QueryTerminatedEvent;
struct QueryProgressEvent {
  StreamingQueryProgress progress;
};

class StreamingQueryListener {
 public:
  virtual ~StreamingQueryListener() = default;
  virtual void OnQueryStarted(const QueryStartedEvent& event) { (void)event; }
  virtual void OnQueryProgress(const QueryProgressEvent& event) { (void)event; }
  virtual void OnQueryIdle(const QueryIdleEvent& event) { (void)event; }
  virtual void OnQueryTerminated(const QueryTerminatedEvent& event) { (void)event; }
};

class ListenerBus {
 public:
  using Event =
      std::variant<QueryStartedEvent, QueryProgressEvent, QueryIdleEvent, QueryTerminatedEvent>;

  ListenerBus();
  // Delivers what is queued, then stops the thread.
  ~ListenerBus();
  ListenerBus(const ListenerBus&) = delete;
  ListenerBus& operator=(const ListenerBus&) = delete;

  void AddListener(std::shared_ptr<StreamingQueryListener> listener) SLUICE_EXCLUDES(mu_);
  void RemoveListener(const StreamingQueryListener* listener) SLUICE_EXCLUDES(mu_);
  // Queues `event` for every listener registered when it is delivered. Never blocks on listeners.
  void Post(Event event) SLUICE_EXCLUDES(mu_);
  // Waits until every event posted so far has been delivered; false on timeout.
  bool WaitUntilEmpty(int64_t timeout_ms) SLUICE_EXCLUDES(mu_);

 private:
  void Run() SLUICE_EXCLUDES(mu_);  // the bus thread

  Mutex mu_;
  CondVar cv_;  // signalled on a post, a delivery and the stop
  std::deque<Event> queue_ SLUICE_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<StreamingQueryListener>> listeners_ SLUICE_GUARDED_BY(mu_);
  int64_t posted_ SLUICE_GUARDED_BY(mu_) = 0;
  int64_t delivered_ SLUICE_GUARDED_BY(mu_) = 0;
  bool stop_ SLUICE_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace sluice::stream
