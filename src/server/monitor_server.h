// MonitorServer: the monitoring HTTP server of `sluice run --ui [HOST:]PORT` (docs/operations.md),
// on HttpServer (http_server.h: one polling thread, bounded header and write timeouts, request
// size and connection count, so that slow clients cannot starve /healthz). Binds 127.0.0.1
// unless another host is given. Routes:
//   GET /                               the live page (ui_page.h): plain HTML + inline SVG charts
//   GET /api/v1/queries                 every query (api_json.h QueriesJson)
//   GET /api/v1/queries/<id>/progress   ?limit=N (default and at most the ring size): the last N
//                                       progress JSONs, newest last; 404 for an unknown id
//   GET /metrics                        Prometheus text format 0.0.4 (prometheus.h)
//   GET /healthz                        200 "ok"; 503 "query <name> (<id>) failed: <error>" while
//                                       a query's last run failed and no restart is scheduled
//
// It owns a QueryStore, a stream::ListenerBus and a MonitorListener registered on it. Runners
// report a query's life with QueryStarted / QueryProgress / QueryTerminated, which only queue an
// event on the bus (they never block on the store or on HTTP clients); the bus thread applies it.
// Events of one query reach the store in the order they were reported. A query engine that takes
// a ListenerBus can be handed bus() directly.
//
// Ownership: Start returns the owner; destroying it (or Stop) stops serving and joins the
// server thread, after delivering the queued events.
// Thread safety: every public method is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "common/result.h"
#include "server/http_server.h"
#include "server/monitor_listener.h"
#include "server/query_store.h"
#include "stream/listener_bus.h"
#include "stream/progress.h"
#include "stream/trigger.h"

namespace sluice::server {

inline constexpr std::string_view kDefaultUiHost = "127.0.0.1";
inline constexpr int kDefaultUiPort = 4040;

struct UiAddress {
  std::string host = std::string(kDefaultUiHost);
  int port = kDefaultUiPort;  // 0: any free port
};

// "" -> 127.0.0.1:4040; "PORT" -> 127.0.0.1:PORT; "HOST:PORT" (HOST an IPv4 address or a name;
// "[::1]:PORT" for IPv6). InvalidArgument naming the text for a bad port (not 0..65535) or an
// empty host.
Result<UiAddress> ParseUiAddress(std::string_view text);

struct MonitorServerOptions {
  UiAddress address;
  QueryStoreOptions store;
  // Limits and timeouts of the HTTP server (its host and port come from `address`).
  HttpServerOptions http;
};

class MonitorServer {
 public:
  // Binds and starts serving on its own thread. IOError naming the address when it cannot bind
  // (port in use, no permission, unknown host).
  static Result<std::unique_ptr<MonitorServer>> Start(MonitorServerOptions options);
  ~MonitorServer();
  MonitorServer(const MonitorServer&) = delete;
  MonitorServer& operator=(const MonitorServer&) = delete;

  // The port it listens on (the chosen one when asked for 0), and "http://host:port/".
  int port() const { return port_; }
  std::string url() const;

  // A query started: records its trigger and queues the start.
  void QueryStarted(const std::string& id, const std::string& run_id,
                    const std::optional<std::string>& name, const stream::Trigger& trigger);
  void QueryProgress(const stream::StreamingQueryProgress& progress);
  // A query ended: `error` is its error message, nullopt after a clean end.
  void QueryTerminated(const std::string& id, const std::string& run_id,
                       const std::optional<std::string>& error);
  // The failed run `run_id` will be restarted (status "restarting": /healthz stays 200).
  void QueryRestarting(const std::string& id, const std::string& run_id);

  // Waits until the queued events are in the store (tests); false on timeout.
  bool Flush(int64_t timeout_ms = 5000);

  const std::shared_ptr<stream::ListenerBus>& bus() const { return bus_; }
  const QueryStore& store() const { return *store_; }

  // Stops serving and joins the server thread. Idempotent.
  void Stop();

 private:
  explicit MonitorServer(MonitorServerOptions options);
  static HttpResponse Route(const QueryStore& store, const HttpRequest& req);

  MonitorServerOptions options_;
  std::unique_ptr<QueryStore> store_;
  std::shared_ptr<MonitorListener> listener_;
  std::shared_ptr<stream::ListenerBus> bus_;
  std::unique_ptr<HttpServer> http_;
  int port_ = 0;
};

// ParseUiAddress(address_text), then MonitorServer::Start on it with the default store options
// (what `sluice run --ui` does).
Result<std::unique_ptr<MonitorServer>> StartMonitorServer(std::string_view address_text);

}  // namespace sluice::server
