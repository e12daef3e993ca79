#include "server/http_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "common/clock.h"
namespace sluice::server {
namespace {

void SetNonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

std::string Serialize(const HttpResponse& r, bool head_only) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + Reason(r.status) +
                    "\r\nContent-Type: " + r.content_type +
                    "\r\nContent-Length: " + std::to_string(r.body.size()) +
                    "\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n";
  if (!head_only) out += r.body;
  return out;
}

HttpResponse Plain(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && Hex(s[i + 1]) >= 0 && Hex(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(Hex(s[i + 1]) * 16 + Hex(s[i + 2])));
      i += 2;
    } else if (plus_is_space && s[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// Parses the head (request line + headers, ending with an empty line). nullopt: 400.
std::optional<HttpRequest> ParseHead(std::string_view head, bool* has_body) {
  size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos) return std::nullopt;
  if (line.substr(sp2 + 1).rfind("HTTP/1.", 0) != 0) return std::nullopt;
  HttpRequest req;
  req.method = std::string(line.substr(0, sp1));
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (target.empty() || target[0] != '/') return std::nullopt;
  size_t q = target.find('?');
  req.path = PercentDecode(target.substr(0, q), false);
  if (q != std::string_view::npos) {
    std::string_view query = target.substr(q + 1);
    while (!query.empty()) {
      size_t amp = query.find('&');
      std::string_view kv = query.substr(0, amp);
      size_t eq = kv.find('=');
      req.params[PercentDecode(kv.substr(0, eq), true)] =
          eq == std::string_view::npos ? "" : PercentDecode(kv.substr(eq + 1), true);
      if (amp == std::string_view::npos) break;
      query = query.substr(amp + 1);
    }
  }
  *has_body = false;
  for (size_t at = eol; at != std::string_view::npos && at + 2 < head.size();) {
    size_t next = head.find("\r\n", at + 2);
    std::string_view h = head.substr(at + 2, next == std::string_view::npos ? next : next - at - 2);
    std::string lower(h.substr(0, h.find(':')));
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "transfer-encoding") *has_body = true;
    if (lower == "content-length") {
      std::string_view v = h.substr(h.find(':') + 1);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      if (v != "0") *has_body = true;
    }
    at = next;
  }
  return req;
}

struct Connection {
  int fd = -1;
  int64_t deadline_ms = 0;
  std::string in;
  std::string out;
  size_t written = 0;
  bool writing = false;
};

}  // namespace

HttpServer::HttpServer(HttpServerOptions options, Handler handler)
    : options_(std::move(options)), handler_(std::move(handler)) {}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(HttpServerOptions options, Handler handler) {
  std::unique_ptr<HttpServer> s(new HttpServer(std::move(options), std::move(handler)));
  const std::string where = s->options_.host + ":" + std::to_string(s->options_.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(s->options_.host.c_str(), std::to_string(s->options_.port).c_str(),
                             &hints, &found);
      rc != 0) {
    return Status::IOError("cannot listen on " + where + ": " + ::gai_strerror(rc));
  }
  int err = 0;
  for (addrinfo* a = found; a != nullptr && s->listen_fd_ < 0; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    // SO_REUSEADDR (a restarted process can bind at once), not SO_REUSEPORT (under which a
    // second process would silently share the port instead of being refused).
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      err = errno;
      ::close(fd);
      continue;
    }
    s->listen_fd_ = fd;
  }
  ::freeaddrinfo(found);
  if (s->listen_fd_ < 0) {
    return Status::IOError("cannot listen on " + where + ": " + std::strerror(err));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  ::getsockname(s->listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  s->port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                               : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  SetNonBlocking(s->listen_fd_);
  if (::pipe2(s->wake_fds_, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Status::FromErrno(errno, "monitoring server: pipe");
  }
  s->thread_ = std::thread([p = s.get()] { p->Run(); });
  return s;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (thread_.joinable()) {
    char c = 0;
    (void)!::write(wake_fds_[1], &c, 1);
    thread_.join();
  }
  for (int* fd : {&listen_fd_, &wake_fds_[0], &wake_fds_[1]}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void HttpServer::Run() {
  std::vector<Connection> conns;
  std::vector<pollfd> fds;
  auto respond = [&](Connection& c, const HttpResponse& r, bool head_only) {
    c.out = Serialize(r, head_only);
    c.written = 0;
    c.writing = true;
    c.deadline_ms = MonotonicMs() + options_.write_timeout_ms;
    ::shutdown(c.fd, SHUT_RD);
  };
  while (true) {
    fds.clear();
    fds.push_back({wake_fds_[0], POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    int64_t now = MonotonicMs();
    int64_t next_deadline = now + 1000;
    for (const Connection& c : conns) {
      fds.push_back({c.fd, static_cast<short>(c.writing ? POLLOUT : POLLIN), 0});
      next_deadline = std::min(next_deadline, c.deadline_ms);
    }
    int wait = static_cast<int>(std::max<int64_t>(0, next_deadline - now));
    if (::poll(fds.data(), fds.size(), wait) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) break;  // Stop
    now = MonotonicMs();
    for (size_t i = 0; i < conns.size(); ++i) {
      Connection& c = conns[i];
      const short ev = fds[i + 2].revents;
      if (!c.writing && (ev & (POLLIN | POLLHUP | POLLERR))) {
        char buf[4096];
        ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
          c.deadline_ms = 0;  // the client went away: close
          c.out.clear();
          c.writing = true;
          continue;
        }
        if (n > 0) c.in.append(buf, static_cast<size_t>(n));
        size_t end = c.in.find("\r\n\r\n");
        if (end == std::string::npos && c.in.size() > options_.max_request_bytes) {
          respond(c,
                  Plain(431, "request head larger than " +
                                 std::to_string(options_.max_request_bytes) + " bytes\n"),
                  false);
        } else if (end != std::string::npos) {
          bool has_body = false;
          std::optional<HttpRequest> req =
              ParseHead(std::string_view(c.in).substr(0, end + 2), &has_body);
          if (!req) {
            respond(c, Plain(400, "malformed request\n"), false);
          } else if (req->method != "GET" && req->method != "HEAD") {
            respond(c, Plain(405, "only GET is served\n"), false);
          } else if (has_body) {
            respond(c, Plain(413, "a GET request takes no body\n"), false);
          } else {
            respond(c, handler_(*req), req->method == "HEAD");
          }
        }
      } else if (c.writing && (ev & (POLLOUT | POLLHUP | POLLERR)) && !c.out.empty()) {
        ssize_t n = ::send(c.fd, c.out.data() + c.written, c.out.size() - c.written, MSG_NOSIGNAL);
        if (n > 0) c.written += static_cast<size_t>(n);
        if (n < 0 && errno != EAGAIN && errno != EINTR) c.out.clear();
      }
    }
    // Finished, failed and expired connections.
    for (size_t i = 0; i < conns.size();) {
      Connection& c = conns[i];
      bool done = c.writing && (c.out.empty() || c.written == c.out.size());
      if (!done && now >= c.deadline_ms) {
        if (!c.writing) {  // a request head too slow: 408, best effort, then closed
          std::string r = Serialize(Plain(408, "request head not received in time\n"), false);
          (void)!::send(c.fd, r.data(), r.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        done = true;
      }
      if (done) {
        ::close(c.fd);
        conns[i] = std::move(conns.back());
        conns.pop_back();
      } else {
        ++i;
      }
    }
    if (fds[1].revents & POLLIN) {
      while (true) {
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) break;
        if (static_cast<int>(conns.size()) >= options_.max_connections) {
          std::string r = Serialize(Plain(503, "too many connections\n"), false);
          (void)!::send(fd, r.data(), r.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
          ::close(fd);
          continue;
        }
        Connection c;
        c.fd = fd;
        c.deadline_ms = now + options_.header_timeout_ms;
        conns.push_back(std::move(c));
      }
    }
  }
  for (Connection& c : conns) ::close(c.fd);
}

}  // namespace sluice::server
