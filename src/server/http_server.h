// HttpServer: a small HTTP/1.1 server for Sluice's monitoring endpoints that a slow or hostile
// client cannot take down (issue 24 #7: with cpp-httplib's thread pool, 8 connections trickling
// a byte at a time made every endpoint, /healthz included, unresponsive while they lasted).
//
// One thread polls the listening socket and every connection (non-blocking sockets), so a slow
// connection costs a file descriptor and a buffer, never a thread. Each connection gets
//   - header_timeout_ms to send its whole request head (request line and headers) from the
//     moment it is accepted, whatever the pace (408 Request Timeout, then closed);
//   - at most max_request_bytes of request head (431, then closed); a request body is refused
//     (the endpoints are GET only: 405 for other methods, 413 for a body);
//   - write_timeout_ms to take its response (then closed);
//   - one request: every response carries "Connection: close" (no idle keep-alive to bound).
// At most max_connections are open at once; one more is answered 503 at once and closed.
// Handlers run on the server thread and must be quick (the monitoring ones read a snapshot).
//
// Binds `host` (the monitoring server's default is 127.0.0.1: loopback only).
// Ownership: Start returns the owner; Stop (or the destructor) stops and joins the thread.
// Thread safety: Start/Stop from one thread; handlers are called on the server thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "common/result.h"

namespace sluice::server {

struct HttpRequest {
  std::string method;                         // "GET"
  std::string path;                           // "/api/v1/queries", percent-decoded
  std::map<std::string, std::string> params;  // the query string, percent-decoded
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port
  int max_connections = 64;
  int64_t header_timeout_ms = 5000;
  int64_t write_timeout_ms = 5000;
  size_t max_request_bytes = 16 * 1024;
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  // Binds and starts serving. IOError naming the address when it cannot bind or resolve.
  static Result<std::unique_ptr<HttpServer>> Start(HttpServerOptions options, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  // Stops serving (open connections are closed) and joins the thread. Idempotent.
  void Stop();

 private:
  HttpServer(HttpServerOptions options, Handler handler);
  void Run();

  HttpServerOptions options_;
  Handler handler_;
  int listen_fd_ = -1;
  int wake_fds_[2] = {-1, -1};  // a pipe: Stop writes, the loop wakes
  int port_ = 0;
  std::thread thread_;
};

}  // namespace sluice::server
