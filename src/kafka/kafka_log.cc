#include "kafka/kafka_log.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace sluice::kafka {

namespace {

constexpr size_t kMaxClients = 64;

struct Registry {
  std::mutex mu;
  // rd_kafka_name -> failures, oldest client first.
  std::deque<std::pair<std::string, KafkaSecurityFailure>> clients;
};

Registry& Failures() {
  static Registry* r = new Registry();  // never destroyed: librdkafka threads may outlive main
  return *r;
}

bool IsSecurityFailure(const char* fac, const char* buf) {
  if (std::strcmp(fac, "FAIL") != 0 && std::strcmp(fac, "ERROR") != 0) return false;
  return std::strstr(buf, "SASL") != nullptr || std::strstr(buf, "SSL") != nullptr;
}

std::string Describe(const char* buf) {
  std::string text = buf;
  // librdkafka before 2.6.1 builds SCRAM's client-final-message with the client nonce twice;
  // Kafka 4 brokers check the nonce strictly (RFC 5802) and refuse it (librdkafka issue 4895).
  if (text.find("SCRAM") != std::string::npos && rd_kafka_version() < 0x020601ff) {
    text += std::string(" [note: the linked librdkafka ") + rd_kafka_version_str() +
            " fails SCRAM against Kafka 4 brokers even with the right password (fixed in "
            "librdkafka 2.6.1)]";
  }
  return text;
}

void OnLog(const rd_kafka_t* rk, int level, const char* fac, const char* buf) {
  rd_kafka_log_print(rk, level, fac, buf);  // librdkafka's own output, unchanged
  if (!IsSecurityFailure(fac, buf)) return;
  std::string name = rd_kafka_name(rk);
  std::string text = Describe(buf);
  Registry& r = Failures();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto now = std::chrono::steady_clock::now();
  for (auto& [n, f] : r.clients) {
    if (n == name) {
      ++f.count;
      f.last = std::move(text);
      f.last_time = now;
      return;
    }
  }
  if (r.clients.size() >= kMaxClients) r.clients.pop_front();
  r.clients.emplace_back(std::move(name), KafkaSecurityFailure{1, std::move(text), now});
}

}  // namespace

void InstallKafkaLog(rd_kafka_conf_t* conf) { rd_kafka_conf_set_log_cb(conf, &OnLog); }

KafkaSecurityFailure KafkaSecurityFailures(rd_kafka_t* rk) {
  std::string name = rd_kafka_name(rk);
  Registry& r = Failures();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& [n, f] : r.clients) {
    if (n == name) return f;
  }
  return {};
}

bool UsesSaslOrTls(rd_kafka_t* rk) {
  char value[64];
  size_t size = sizeof(value);
  if (rd_kafka_conf_get(rd_kafka_conf(rk), "security.protocol", value, &size) != RD_KAFKA_CONF_OK) {
    return false;
  }
  return std::strcmp(value, "plaintext") != 0 && std::strcmp(value, "PLAINTEXT") != 0;
}

Status WithKafkaSecurityFailure(rd_kafka_t* rk, Status st) {
  if (st.ok()) return st;
  KafkaSecurityFailure f = KafkaSecurityFailures(rk);
  // A request can fail (the broker's connection went down) before librdkafka logs why: give a
  // SASL or TLS client a moment to log it.
  for (int i = 0; i < 60 && f.count == 0 && UsesSaslOrTls(rk); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    f = KafkaSecurityFailures(rk);
  }
  if (f.count == 0) return st;
  return Status(st.code(), st.message() +
                               "; the broker refused the client (authentication or "
                               "TLS): " +
                               f.last);
}

rd_kafka_resp_err_t WaitUnlessRefused(rd_kafka_t* rk, int64_t timeout_ms,
                                      const std::function<rd_kafka_resp_err_t(int)>& op) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(std::max<int64_t>(0, timeout_ms));
  int64_t slice = 500;
  for (;;) {
    int64_t left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    left = std::max<int64_t>(0, left);
    rd_kafka_resp_err_t err = op(static_cast<int>(std::min(slice, left)));
    if (err != RD_KAFKA_RESP_ERR__TIMED_OUT) return err;
    KafkaSecurityFailure f = KafkaSecurityFailures(rk);
    if (f.count > 0 && Clock::now() - f.last_time < std::chrono::seconds(60)) {
      return RD_KAFKA_RESP_ERR__AUTHENTICATION;
    }
    if (left <= slice) return err;
    slice = std::min<int64_t>(slice * 2, 8000);
  }
}

Status FlushUnlessRefused(rd_kafka_t* rk, int64_t timeout_ms, const std::string& what) {
  rd_kafka_resp_err_t err =
      WaitUnlessRefused(rk, timeout_ms, [rk](int ms) { return rd_kafka_flush(rk, ms); });
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::OK();
  if (err == RD_KAFKA_RESP_ERR__AUTHENTICATION) {
    return Status::IOError(what +
                           ": authentication or TLS failed: " + KafkaSecurityFailures(rk).last);
  }
  return Status::IOError(what + ": records not delivered in time: " + rd_kafka_err2str(err));
}

}  // namespace sluice::kafka
