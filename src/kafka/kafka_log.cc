#include "kafka/kafka_log.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "common/mutex.h"

namespace sluice::kafka {

namespace {

constexpr size_t kMaxClients = 64;

struct ClientState {
  KafkaSecurityFailure security;
  // Connection failures of bootstrap brokers ("<host:port>/bootstrap"), by broker name.
  std::set<std::string> failed_bootstrap;
  std::string last_connect_failure;
  bool reached = false;  // an operation got an answer from the cluster
};

// Lock discipline: mu guards the clients; it is taken by the log callback (librdkafka's threads)
// and the readers below, and held only to read or change an entry.
struct Registry {
  Mutex mu;
  // rd_kafka_name -> state, oldest client first.
  std::deque<std::pair<std::string, ClientState>> clients SLUICE_GUARDED_BY(mu);

  // The client's entry, made when missing (the oldest dropped past kMaxClients).
  ClientState& Get(const std::string& name) SLUICE_REQUIRES(mu) {
    for (auto& [n, c] : clients) {
      if (n == name) return c;
    }
    if (clients.size() >= kMaxClients) clients.pop_front();
    clients.emplace_back(name, ClientState{});
    return clients.back().second;
  }
  // A copy of the client's entry, empty when there is none.
  ClientState Find(const std::string& name) const SLUICE_REQUIRES(mu) {
    for (const auto& [n, c] : clients) {
      if (n == name) return c;
    }
    return {};
  }
};

Registry& Failures() {
  static Registry* r = new Registry();  // never destroyed: librdkafka threads may outlive main
  return *r;
}

bool IsFailureLine(const char* fac) {
  return std::strcmp(fac, "FAIL") == 0 || std::strcmp(fac, "ERROR") == 0;
}

bool IsSecurityFailure(const char* buf) {
  return std::strstr(buf, "SASL") != nullptr || std::strstr(buf, "SSL") != nullptr;
}

// "127.0.0.1:9/bootstrap" of "127.0.0.1:9/bootstrap: Connect to ... failed: ...", or empty when
// the line is not about a bootstrap broker.
std::string BootstrapBrokerOf(const char* buf) {
  const char* colon = std::strstr(buf, "/bootstrap: ");
  if (colon == nullptr) return "";
  return std::string(buf, colon + std::strlen("/bootstrap") - buf);
}

void OnLog(const rd_kafka_t* rk, int level, const char* fac, const char* buf) {
  rd_kafka_log_print(rk, level, fac, buf);  // librdkafka's own output, unchanged
  if (!IsFailureLine(fac)) return;
  const bool security = IsSecurityFailure(buf);
  std::string broker = security ? "" : BootstrapBrokerOf(buf);
  if (!security && (broker.empty() || std::strcmp(fac, "FAIL") != 0)) return;
  Registry& r = Failures();
  MutexLock lock(&r.mu);
  ClientState& c = r.Get(rd_kafka_name(rk));
  if (security) {
    ++c.security.count;
    c.security.last = buf;
    c.security.last_time = std::chrono::steady_clock::now();
  } else {
    if (c.failed_bootstrap.size() < 256) c.failed_bootstrap.insert(std::move(broker));
    c.last_connect_failure = buf;
  }
}

void MarkReached(rd_kafka_t* rk) {
  Registry& r = Failures();
  MutexLock lock(&r.mu);
  r.Get(rd_kafka_name(rk)).reached = true;
}

std::string ConfValue(rd_kafka_t* rk, const char* name) {
  char value[4096];
  size_t size = sizeof(value);
  if (rd_kafka_conf_get(rd_kafka_conf(rk), name, value, &size) != RD_KAFKA_CONF_OK) return "";
  return value;
}

// The number of entries of bootstrap.servers (at least 1).
size_t BootstrapCount(rd_kafka_t* rk) {
  std::string servers = ConfValue(rk, "bootstrap.servers");
  size_t n = 0;
  for (size_t start = 0; start <= servers.size();) {
    size_t comma = servers.find(',', start);
    if (comma == std::string::npos) comma = servers.size();
    if (servers.find_first_not_of(" \t", start) < comma) ++n;
    start = comma + 1;
  }
  return std::max<size_t>(n, 1);
}

}  // namespace

void InstallKafkaLog(rd_kafka_conf_t* conf) { rd_kafka_conf_set_log_cb(conf, &OnLog); }

KafkaSecurityFailure KafkaSecurityFailures(rd_kafka_t* rk) {
  Registry& r = Failures();
  MutexLock lock(&r.mu);
  return r.Find(rd_kafka_name(rk)).security;
}

std::string KafkaBootstrapServers(rd_kafka_t* rk) { return ConfValue(rk, "bootstrap.servers"); }

bool KafkaClusterUnreachable(rd_kafka_t* rk, std::string* why) {
  const size_t bootstrap = BootstrapCount(rk);
  Registry& r = Failures();
  MutexLock lock(&r.mu);
  ClientState c = r.Find(rd_kafka_name(rk));
  if (c.reached || c.failed_bootstrap.size() < bootstrap) return false;
  if (why) *why = c.last_connect_failure;
  return true;
}

bool UsesSaslOrTls(rd_kafka_t* rk) {
  char value[64];
  size_t size = sizeof(value);
  if (rd_kafka_conf_get(rd_kafka_conf(rk), "security.protocol", value, &size) != RD_KAFKA_CONF_OK) {
    return false;
  }
  return std::strcmp(value, "plaintext") != 0 && std::strcmp(value, "PLAINTEXT") != 0;
}

Status WithKafkaClientFailure(rd_kafka_t* rk, Status st) {
  if (st.ok()) return st;
  KafkaSecurityFailure f = KafkaSecurityFailures(rk);
  // A request can fail (the broker's connection went down) before librdkafka logs why: give a
  // SASL or TLS client a moment to log it.
  for (int i = 0; i < 60 && f.count == 0 && UsesSaslOrTls(rk); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    f = KafkaSecurityFailures(rk);
  }
  const std::string servers = "kafka.bootstrap.servers '" + KafkaBootstrapServers(rk) + "'";
  if (f.count > 0) {
    return Status(st.code(), st.message() +
                                 "; the broker refused the client (authentication or TLS) at " +
                                 servers + ": " + f.last);
  }
  std::string why;
  if (KafkaClusterUnreachable(rk, &why)) {
    return Status(st.code(),
                  st.message() + "; no broker of " + servers + " could be reached: " + why);
  }
  return st;
}

rd_kafka_resp_err_t WaitUnlessRefused(rd_kafka_t* rk, int64_t timeout_ms,
                                      const std::function<rd_kafka_resp_err_t(int)>& op,
                                      const std::function<bool()>& cancelled) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(std::max<int64_t>(0, timeout_ms));
  int64_t slice = 500;
  for (;;) {
    if (cancelled && cancelled()) return RD_KAFKA_RESP_ERR__INTR;
    int64_t left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    left = std::max<int64_t>(0, left);
    rd_kafka_resp_err_t err = op(static_cast<int>(std::min(slice, left)));
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) MarkReached(rk);
    const bool transport =
        err == RD_KAFKA_RESP_ERR__TRANSPORT || err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN;
    if (err != RD_KAFKA_RESP_ERR__TIMED_OUT && !transport) return err;
    if (KafkaClusterUnreachable(rk, nullptr)) return RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN;
    if (transport) return err;
    KafkaSecurityFailure f = KafkaSecurityFailures(rk);
    if (f.count > 0 && Clock::now() - f.last_time < std::chrono::seconds(60)) {
      return RD_KAFKA_RESP_ERR__AUTHENTICATION;
    }
    if (left <= slice) return err;
    slice = std::min<int64_t>(slice * 2, 1000);
  }
}

Status FlushUnlessRefused(rd_kafka_t* rk, int64_t timeout_ms, const std::string& what) {
  if (rd_kafka_outq_len(rk) == 0) return Status::OK();  // nothing to deliver, nothing learnt
  rd_kafka_resp_err_t err =
      WaitUnlessRefused(rk, timeout_ms, [rk](int ms) { return rd_kafka_flush(rk, ms); });
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::OK();
  if (err == RD_KAFKA_RESP_ERR__AUTHENTICATION) {
    return Status::IOError(what +
                           ": authentication or TLS failed: " + KafkaSecurityFailures(rk).last);
  }
  if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) {
    return WithKafkaClientFailure(rk, Status::IOError(what + ": records not delivered"));
  }
  return Status::IOError(what + ": records not delivered in time: " + rd_kafka_err2str(err));
}

}  // namespace sluice::kafka
