#include "server/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "server/monitor_server.h"

namespace sluice::server {
namespace {

// A blocking client socket to 127.0.0.1:port whose reads give up after 10 s (a guard against a
// hung test, not a measured time).
int Connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  return fd;
}

void Send(int fd, const std::string& text) {
  EXPECT_EQ(::send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
}

// Everything the server sends until it closes (or the 10 s guard).
std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) out.append(buf, size_t(n));
  return out;
}

std::string Get(int port, const std::string& target) {
  int fd = Connect(port);
  Send(fd, "GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string r = ReadAll(fd);
  ::close(fd);
  return r;
}

std::unique_ptr<HttpServer> StartEcho(HttpServerOptions o) {
  auto s = HttpServer::Start(o, [](const HttpRequest& req) {
    HttpResponse r;
    r.body = req.method + " " + req.path;
    for (const auto& [k, v] : req.params) r.body += " " + k + "=" + v;
    return r;
  });
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).ValueOrDie() : nullptr;
}

TEST(HttpServerTest, ServesOneRequestPerConnection) {
  auto s = StartEcho({});
  ASSERT_NE(s, nullptr);
  std::string r = Get(s->port(), "/a%20b?limit=3&x=y+z");
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
  EXPECT_NE(r.find("Connection: close\r\n"), std::string::npos) << r;
  EXPECT_NE(r.find("\r\n\r\nGET /a b limit=3 x=y z"), std::string::npos) << r;
  EXPECT_EQ(Get(s->port(), "nonsense").rfind("HTTP/1.1 400", 0), 0u);
  int fd = Connect(s->port());
  Send(fd, "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
  EXPECT_EQ(ReadAll(fd).rfind("HTTP/1.1 405", 0), 0u);
  ::close(fd);
  fd = Connect(s->port());
  Send(fd, "GET / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
  EXPECT_EQ(ReadAll(fd).rfind("HTTP/1.1 413", 0), 0u);
  ::close(fd);
}

// Issue 24 #7: slow-trickling connections (more than cpp-httplib's 8 pool threads) must not
// make the server unresponsive; each is cut at its header timeout; an oversized head is refused;
// beyond the connection limit a connection is answered 503 at once.
TEST(HttpServerTest, SlowConnectionsDoNotStarveOthers) {
  HttpServerOptions o;
  o.header_timeout_ms = 60000;  // the slow ones stay open for the whole test
  o.max_connections = 40;
  o.max_request_bytes = 1024;
  auto s = StartEcho(o);
  ASSERT_NE(s, nullptr);
  std::vector<int> slow;
  for (int i = 0; i < 32; ++i) {
    slow.push_back(Connect(s->port()));
    Send(slow.back(), "GET /slow HTTP/1.1\r\nHo");  // and nothing more
  }
  for (int i = 0; i < 5; ++i) {
    EXPECT_NE(Get(s->port(), "/healthz").find("\r\n\r\nGET /healthz"), std::string::npos);
  }
  int big = Connect(s->port());
  Send(big, "GET / HTTP/1.1\r\nX: " + std::string(2000, 'a'));
  EXPECT_EQ(ReadAll(big).rfind("HTTP/1.1 431", 0), 0u);
  ::close(big);
  // Fill up to the limit: the next connection is refused at once, the server stays alive.
  std::vector<int> more;
  for (int i = 0; i < 8; ++i) more.push_back(Connect(s->port()));
  std::string refused = Get(s->port(), "/healthz");
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  for (int fd : more) ::close(fd);
  for (int fd : slow) ::close(fd);
  // Once they are gone, it serves again (the server notices the closes on its next poll).
  std::string again;
  for (int i = 0; i < 100 && again.find("200 OK") == std::string::npos; ++i) {
    again = Get(s->port(), "/healthz");
  }
  EXPECT_NE(again.find("200 OK"), std::string::npos) << again;
}

TEST(HttpServerTest, AHeadNotCompleteInTimeGets408AndIsClosed) {
  HttpServerOptions o;
  o.header_timeout_ms = 200;
  auto s = StartEcho(o);
  ASSERT_NE(s, nullptr);
  int fd = Connect(s->port());
  Send(fd, "GET / HTTP/1.1\r\n");
  EXPECT_EQ(ReadAll(fd).rfind("HTTP/1.1 408", 0), 0u);
  ::close(fd);
}

// The monitoring server binds loopback unless told otherwise, and answers /healthz under a
// flood of slow connections.
TEST(HttpServerTest, MonitorServerBindsLoopbackAndAnswersHealthzUnderASlowFlood) {
  MonitorServerOptions o;
  o.address.port = 0;
  auto server = MonitorServer::Start(o);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  std::vector<int> slow;
  for (int i = 0; i < 16; ++i) {
    slow.push_back(Connect(port));
    Send(slow.back(), "GET /metrics HTTP/1.1\r\n");
  }
  std::string r = Get(port, "/healthz");
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
  EXPECT_NE(r.find("\r\n\r\nok\n"), std::string::npos) << r;
  for (int fd : slow) ::close(fd);
  // Not reachable on another local address: it listens on 127.0.0.1 only.
  int probe = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(0x7f000002);  // 127.0.0.2: loopback, but not the bound address
  EXPECT_NE(::connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ::close(probe);
}

}  // namespace
}  // namespace sluice::server
