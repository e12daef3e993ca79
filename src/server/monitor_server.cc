#include "server/monitor_server.h"

#include <atomic>
#include <charconv>
#include <chrono>

#include "server/api_json.h"
#include "server/http_server.h"
#include "server/prometheus.h"
#include "server/ui_page.h"

namespace sluice::server {

Result<UiAddress> ParseUiAddress(std::string_view text) {
  UiAddress a;
  if (text.empty()) return a;
  std::string_view port_text = text;
  size_t colon = text.rfind(':');
  if (colon != std::string_view::npos) {
    std::string_view host = text.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    if (host.empty()) {
      return Status::InvalidArgument("--ui '" + std::string(text) +
                                     "': the host before ':' is empty (use [HOST:]PORT)");
    }
    a.host = std::string(host);
    port_text = text.substr(colon + 1);
  }
  int port = -1;
  auto res = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || res.ec != std::errc() ||
      res.ptr != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    return Status::InvalidArgument(
        "--ui '" + std::string(text) +
        "': the port must be a number from 0 to 65535 (use [HOST:]PORT)");
  }
  a.port = port;
  return a;
}

MonitorServer::MonitorServer(MonitorServerOptions options)
    : options_(std::move(options)),
      store_(std::make_unique<QueryStore>(options_.store)),
      listener_(std::make_shared<MonitorListener>(store_.get())),
      bus_(std::make_shared<stream::ListenerBus>()) {
  bus_->AddListener(listener_);
}

Result<std::unique_ptr<MonitorServer>> MonitorServer::Start(MonitorServerOptions options) {
  std::unique_ptr<MonitorServer> s(new MonitorServer(std::move(options)));
  const UiAddress& a = s->options_.address;
  HttpServerOptions http = s->options_.http;
  http.host = a.host;
  http.port = a.port;
  const QueryStore* store = s->store_.get();
  Result<std::unique_ptr<HttpServer>> started =
      HttpServer::Start(http, [store](const HttpRequest& req) { return Route(*store, req); });
  if (!started.ok()) {
    return Status::IOError(started.status().message() +
                           " for the monitoring UI (port in use, not permitted, or unknown host)");
  }
  s->http_ = std::move(started).ValueOrDie();
  s->port_ = s->http_->port();
  return s;
}

Result<std::unique_ptr<MonitorServer>> StartMonitorServer(std::string_view address_text) {
  SLUICE_ASSIGN_OR_RETURN(UiAddress address, ParseUiAddress(address_text));
  MonitorServerOptions options;
  options.address = address;
  return MonitorServer::Start(std::move(options));
}

MonitorServer::~MonitorServer() { Stop(); }

void MonitorServer::Stop() {
  if (http_) http_->Stop();
  if (listener_) {
    (void)bus_->WaitUntilEmpty(5000);
    bus_->RemoveListener(listener_.get());
    listener_.reset();
  }
}

std::string MonitorServer::url() const {
  const std::string& host = options_.address.host;
  bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port_) + "/";
}

void MonitorServer::QueryStarted(const std::string& id, const std::string& run_id,
                                 const std::optional<std::string>& name,
                                 const stream::Trigger& trigger) {
  store_->SetTrigger(id, trigger.ToString(), trigger.interval_ms);
  bus_->Post(stream::QueryStartedEvent{id, run_id, name, ""});
}

void MonitorServer::QueryProgress(const stream::StreamingQueryProgress& progress) {
  bus_->Post(stream::QueryProgressEvent{progress});
}

void MonitorServer::QueryTerminated(const std::string& id, const std::string& run_id,
                                    const std::optional<std::string>& error) {
  bus_->Post(stream::QueryTerminatedEvent{id, run_id, error});
}

void MonitorServer::QueryRestarting(const std::string& id, const std::string& run_id) {
  // Directly: the bus has no such event, and the store accepts it before or after the run's end.
  store_->OnRestarting(id, run_id);
}

bool MonitorServer::Flush(int64_t timeout_ms) { return bus_->WaitUntilEmpty(timeout_ms); }

namespace {

std::string Dump(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

HttpResponse Content(int status, std::string body, std::string content_type) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.content_type = std::move(content_type);
  return r;
}

constexpr char kJson[] = "application/json";

}  // namespace

HttpResponse MonitorServer::Route(const QueryStore& store, const HttpRequest& req) {
  const std::string& path = req.path;
  if (path == "/") return Content(200, std::string(IndexHtml()), "text/html; charset=utf-8");
  if (path == "/api/v1/queries") {
    return Content(200, Dump(QueriesJson(store.Snapshot(SystemNowMs()))), kJson);
  }
  constexpr std::string_view kQueries = "/api/v1/queries/", kProgress = "/progress";
  if (path.size() > kQueries.size() + kProgress.size() && path.starts_with(kQueries) &&
      path.ends_with(kProgress)) {
    std::string id = path.substr(kQueries.size(), path.size() - kQueries.size() - kProgress.size());
    if (id.find('/') == std::string::npos) {
      size_t limit = store.max_progress_per_query();
      if (auto it = req.params.find("limit"); it != req.params.end()) {
        const std::string& text = it->second;
        size_t n = 0;
        auto r = std::from_chars(text.data(), text.data() + text.size(), n);
        if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size()) {
          return Content(
              400, Dump({{"error", "limit must be a non-negative integer, got '" + text + "'"}}),
              kJson);
        }
        limit = std::min(limit, n);
      }
      auto progress = store.Progress(id, limit);
      if (!progress) return Content(404, Dump({{"error", "no query with id '" + id + "'"}}), kJson);
      return Content(200, ProgressArrayJson(*progress), kJson);
    }
  }
  if (path == "/metrics") {
    return Content(200, FormatPrometheus(store.Snapshot(SystemNowMs())),
                   std::string(kPrometheusContentType));
  }
  if (path == "/healthz") {
    for (const QuerySnapshot& q : store.Snapshot(SystemNowMs())) {
      if (q.status != QueryStatus::kFailed) continue;
      return Content(503,
                     "query " + q.name.value_or("(unnamed)") + " (" + q.id + ") failed: " +
                         (q.error ? q.error->message : std::string("unknown error")) + "\n",
                     "text/plain; charset=utf-8");
    }
    return Content(200, "ok\n", "text/plain; charset=utf-8");
  }
  return Content(404, "not found\n", "text/plain; charset=utf-8");
}

}  // namespace sluice::server
