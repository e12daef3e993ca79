// librdkafka's log lines for every client NewKafkaHandle makes: written to Sluice's log
// (common/logging.h), and each client's authentication, TLS and connection failures remembered,
// so that an operation that fails or waits because the broker refused the client, or because no
// broker could be reached at all, can say why at once (librdkafka itself keeps retrying and
// reports only "Broker transport failure" or a timeout; the Java client throws a
// SaslAuthenticationException / SslAuthenticationException).
//
// A security failure is a log line of facility FAIL or ERROR whose text names SASL or SSL
// (librdkafka's "SASL authentication error: ...", "SSL handshake failed: ..."); a connection
// failure is any other FAIL line of a bootstrap broker ("127.0.0.1:9/bootstrap: Connect to
// ipv4#127.0.0.1:9 failed: Connection refused ...", "Failed to resolve ..."). librdkafka never
// logs a password. Clients are told apart by rd_kafka_name, unique in a process, so a destroyed
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

// The client's bootstrap.servers as configured ("b-1:9096,b-2:9096").
std::string KafkaBootstrapServers(rd_kafka_t* rk);

// Whether the client has never reached a broker and a connection to every one of its bootstrap
// servers has failed; `why` (may be null) gets the last failure's text. A client that has reached
// the cluster once (WaitUnlessRefused saw an answer) is never unreachable: a broker restarting
// later is waited for.
bool KafkaClusterUnreachable(rd_kafka_t* rk, std::string* why);

// `st` (when not OK) with the reason librdkafka's log gave: "; the broker refused the client
// (authentication or TLS) at kafka.bootstrap.servers '<servers>': <last failure>" when the client
// logged a security failure, "; no broker of kafka.bootstrap.servers '<servers>' could be reached:
// <last failure>" when it is unreachable (KafkaClusterUnreachable); otherwise `st` unchanged. A
// client with SASL or TLS that has logged none yet is given up to 3 s to log it (a request may
// fail before librdkafka logs the failure of its connection).
Status WithKafkaClientFailure(rd_kafka_t* rk, Status st);

// Runs `op(ms)`, a blocking librdkafka call with a timeout (rd_kafka_metadata, rd_kafka_flush,
// ...), with timeouts growing from 500 ms to 1 s until it returns anything but
// RD_KAFKA_RESP_ERR__TIMED_OUT or `timeout_ms` has passed, as one call with `timeout_ms` would;
// an answer (RD_KAFKA_RESP_ERR_NO_ERROR) marks the client as having reached the cluster. But it
// returns at once:
//  - RD_KAFKA_RESP_ERR__AUTHENTICATION when a try times out while the client has logged an
//    authentication or TLS failure in the last 60 s: librdkafka keeps retrying a broker that
//    refuses the client and would wait out the whole timeout;
//  - RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN when a try times out or fails with a transport error
//    while the client is unreachable (KafkaClusterUnreachable: nothing listens at any bootstrap
//    server, a name does not resolve);
//  - RD_KAFKA_RESP_ERR__INTR when `cancelled` (may be empty) returns true between tries.
rd_kafka_resp_err_t WaitUnlessRefused(rd_kafka_t* rk, int64_t timeout_ms,
                                      const std::function<rd_kafka_resp_err_t(int)>& op,
                                      const std::function<bool()>& cancelled = {});

// rd_kafka_flush through WaitUnlessRefused: OK when every queued record was delivered; IOError
// "<what>: authentication or TLS failed: <failure>" when the broker refuses the client, "<what>:
// no broker of kafka.bootstrap.servers '<servers>' could be reached: <failure>", or "<what>:
// records not delivered in time: <librdkafka's error>".
Status FlushUnlessRefused(rd_kafka_t* rk, int64_t timeout_ms, const std::string& what);

}  // namespace sluice::kafka
