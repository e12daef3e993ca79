#include "server/monitor_server.h"

#include <atomic>
#include <charconv>
#include <chrono>

#include <httplib.h>

#include "server/api_json.h"
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
      bus_(std::make_shared<stream::ListenerBus>()),
      http_(std::make_unique<httplib::Server>()) {
  bus_->AddListener(listener_);
  // SO_REUSEADDR (a restarted process can bind at once) but not httplib's default SO_REUSEPORT,
  // under which a second process would silently share the port instead of being refused.
  http_->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<char*>(&yes), sizeof(yes));
  });
}

Result<std::unique_ptr<MonitorServer>> MonitorServer::Start(MonitorServerOptions options) {
  std::unique_ptr<MonitorServer> s(new MonitorServer(std::move(options)));
  s->Route();
  const UiAddress& a = s->options_.address;
  if (a.port == 0) {
    s->port_ = s->http_->bind_to_any_port(a.host);
  } else {
    s->port_ = s->http_->bind_to_port(a.host, a.port) ? a.port : -1;
  }
  if (s->port_ <= 0) {
    return Status::IOError("cannot listen on " + a.host + ":" + std::to_string(a.port) +
                           " for the monitoring UI (port in use, not permitted, or unknown host)");
  }
  httplib::Server* http = s->http_.get();
  auto ended = std::make_shared<std::atomic<bool>>(false);
  s->thread_ = std::thread([http, ended] {
    http->listen_after_bind();
    ended->store(true);
  });
  // httplib's stop() does nothing before the accept loop runs, so a Stop() right after Start()
  // would leave the thread listening forever: wait until it runs (or has already ended).
  while (!http->is_running() && !ended->load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
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
  if (thread_.joinable()) {
    http_->stop();
    thread_.join();
  }
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

void NoCache(httplib::Response& res) { res.set_header("Cache-Control", "no-store"); }

}  // namespace

void MonitorServer::Route() {
  const QueryStore* store = store_.get();
  http_->Get("/", [](const httplib::Request&, httplib::Response& res) {
    NoCache(res);
    res.set_content(std::string(IndexHtml()), "text/html; charset=utf-8");
  });
  http_->Get("/api/v1/queries", [store](const httplib::Request&, httplib::Response& res) {
    NoCache(res);
    res.set_content(Dump(QueriesJson(store->Snapshot(SystemNowMs()))), "application/json");
  });
  http_->Get(R"(/api/v1/queries/([^/]+)/progress)", [store](const httplib::Request& req,
                                                            httplib::Response& res) {
    NoCache(res);
    size_t limit = store->max_progress_per_query();
    if (req.has_param("limit")) {
      std::string text = req.get_param_value("limit");
      size_t n = 0;
      auto r = std::from_chars(text.data(), text.data() + text.size(), n);
      if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size()) {
        res.status = 400;
        res.set_content(
            Dump({{"error", "limit must be a non-negative integer, got '" + text + "'"}}),
            "application/json");
        return;
      }
      limit = std::min(limit, n);
    }
    std::string id = req.matches[1];
    auto progress = store->Progress(id, limit);
    if (!progress) {
      res.status = 404;
      res.set_content(Dump({{"error", "no query with id '" + id + "'"}}), "application/json");
      return;
    }
    res.set_content(ProgressArrayJson(*progress), "application/json");
  });
  http_->Get("/metrics", [store](const httplib::Request&, httplib::Response& res) {
    NoCache(res);
    res.set_content(FormatPrometheus(store->Snapshot(SystemNowMs())),
                    std::string(kPrometheusContentType));
  });
  http_->Get("/healthz", [store](const httplib::Request&, httplib::Response& res) {
    NoCache(res);
    for (const QuerySnapshot& q : store->Snapshot(SystemNowMs())) {
      if (q.status != QueryStatus::kFailed) continue;
      res.status = 503;
      res.set_content("query " + q.name.value_or("(unnamed)") + " (" + q.id + ") failed: " +
                          (q.error ? q.error->message : std::string("unknown error")) + "\n",
                      "text/plain; charset=utf-8");
      return;
    }
    res.set_content("ok\n", "text/plain; charset=utf-8");
  });
}

}  // namespace sluice::server
