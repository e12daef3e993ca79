// librdkafka's log lines for every client NewKafkaHandle makes: written to Sluice's log
// (common/logging.h), and each client's authentication and TLS failures remembered, so that an
// operation that fails or waits because the broker refused the client can say why (librdkafka
// itself reports only "Broker transport failure" or a timeout; the Java client throws a
// SaslAuthenticationException / SslAuthenticationException).
//
// A failure is a log line of facility FAIL or ERROR whose text names SASL or SSL (librdkafka's
// "SASL authentication error: ...", "SSL handshake failed: ..."); librdkafka never logs a
// password. Clients are told apart by rd_kafka_name, unique in a process, so a destroyed
// client's entry can never be mistaken for a new one's; at most 64 clients' failures are kept.
//
// Thread safety: all functions may be called from any thread (the log callback runs on
// librdkafka's threads).
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"

namespace sluice::kafka {

// Installs the log callback on `conf` (before rd_kafka_new).
void InstallKafkaLog(rd_kafka_conf_t* conf);

struct KafkaSecurityFailure {
  uint64_t count = 0;                               // how many were logged for the client so far
  std::string last;                                 // the last one's text, empty when count is 0
  std::chrono::steady_clock::time_point last_time;  // when the last one was logged
};
KafkaSecurityFailure KafkaSecurityFailures(rd_kafka_t* rk);

// `st` (when not OK) with "; the broker refused the client (authentication or TLS): <last
// failure>" appended when the client logged one; otherwise `st` unchanged. A client with SASL or
// TLS that has logged none yet is given up to 3 s to log it (a request may fail before
// librdkafka logs the failure of its connection).
Status WithKafkaSecurityFailure(rd_kafka_t* rk, Status st);

// Runs `op(ms)`, a blocking librdkafka call with a timeout (rd_kafka_metadata, rd_kafka_flush,
// ...), with timeouts growing from 500 ms until it returns anything but
// RD_KAFKA_RESP_ERR__TIMED_OUT or `timeout_ms` has passed, as one call with `timeout_ms` would;
// but when a try times out while the client has logged an authentication or TLS failure in the
// last 60 s, returns RD_KAFKA_RESP_ERR__AUTHENTICATION at once: librdkafka keeps retrying a
// broker that refuses the client and would wait out the whole timeout (the Java client fails
// with a SaslAuthenticationException / SslAuthenticationException instead).
rd_kafka_resp_err_t WaitUnlessRefused(rd_kafka_t* rk, int64_t timeout_ms,
                                      const std::function<rd_kafka_resp_err_t(int)>& op);

// rd_kafka_flush through WaitUnlessRefused: OK when every queued record was delivered; IOError
// "<what>: authentication or TLS failed: <failure>" when the broker refuses the client, or
// "<what>: records not delivered in time: <librdkafka's error>".
Status FlushUnlessRefused(rd_kafka_t* rk, int64_t timeout_ms, const std::string& what);

}  // namespace sluice::kafka
