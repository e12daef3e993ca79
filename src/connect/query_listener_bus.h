// QueryListenerBus: spark.streams.addListener over Spark Connect, as PySpark 4.x does it. The
// listeners live in the client: its listener bus sends StreamingQueryListenerBusCommand
// add_listener_bus_listener once (for its first listener), and the server answers on that
// ExecutePlan stream, which stays open: first listener_bus_listener_added, then the events of
// the session's queries as they happen (StreamingQueryListenerEvent: Spark's event JSON and its
// type: progress, idle, terminated), until remove_listener_bus_listener (the client's last
// listener removed), the client's cancel, or the session's end. The started event is not on
// the stream: while the bus is open, WriteStreamOperationStartResult carries it
// (query_started_event_json) and the client posts it itself, before start() returns.
//
// The JSON is Spark's (what PySpark's QueryProgressEvent/QueryIdleEvent/QueryTerminatedEvent
// .fromJson read): {"progress": <StreamingQueryProgress>}, {"id", "runId", "timestamp"},
// {"id", "runId", "exception", "errorClassOnException"}, and for the start {"id", "runId",
// "name", "timestamp", "jobTags"}.
//
// It is a listener of the SessionStreams' API session (every query of the Connect session);
// events are queued only while a stream is open.
//
// Thread safety: the callbacks run on the API session's listener thread; Open/Close/Next from
// gRPC threads. All methods are thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "sluice/streaming.h"

namespace sluice::connect {

class QueryListenerBus : public sluice::StreamingQueryListener {
 public:
  struct Event {
    std::string json;
    int type = 0;  // spark.connect.StreamingQueryEventType
  };

  void OnQueryProgress(const sluice::QueryProgressEvent& event) override;
  void OnQueryIdle(const sluice::QueryIdleEvent& event) override;
  void OnQueryTerminated(const sluice::QueryTerminatedEvent& event) override;

  // A client's bus opens: returns the stream's generation (an earlier stream ends).
  uint64_t Open();
  // The client removed its last listener: the open stream ends.
  void Close();
  bool IsOpen() const;
  // The events queued for the stream `generation`, waiting up to `timeout` (empty on timeout);
  // nullopt once that stream is closed or replaced.
  std::optional<std::vector<Event>> Next(uint64_t generation, std::chrono::milliseconds timeout);

  // The started event's JSON for a query started now.
  static std::string StartedEventJson(const std::string& id, const std::string& run_id,
                                      const std::optional<std::string>& name);

 private:
  void Post(Event event);

  mutable Mutex mu_;
  CondVar cv_;
  uint64_t generation_ SLUICE_GUARDED_BY(mu_) = 0;
  bool open_ SLUICE_GUARDED_BY(mu_) = false;
  std::deque<Event> queue_ SLUICE_GUARDED_BY(mu_);
};

}  // namespace sluice::connect
