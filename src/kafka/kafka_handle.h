// Making librdkafka clients from Sluice's option maps: one place for building the configuration,
// for reporting a property librdkafka refuses without repeating its value (it may be a secret:
// kafka.sasl.password, kafka.ssl.key.password, ...), and for freeing the configuration on every
// error path. Used by the Kafka source, the Kafka sink and record writer, and the CLI's Nexmark
// feed.
//
// Thread safety: the functions are pure; the returned handle is librdkafka's (thread-safe for
// producers, one thread at a time for consumers).
#pragma once

#include <librdkafka/rdkafka.h>

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice::kafka {

struct KafkaHandleSpec {
  rd_kafka_type_t type = RD_KAFKA_PRODUCER;
  // Properties the caller sets itself; a refused one is reported as "setting '<name>'".
  std::map<std::string, std::string> defaults;
  // The user's properties ("kafka.*" options without the prefix), translated from the Java
  // client's security options (kafka_security_conf.h), applied after `defaults` and overriding
  // them; a refused one is reported as "option 'kafka.<name>'".
  std::map<std::string, std::string> user;
  // Prefixes every error ("kafka sink", "Kafka consumer", ...).
  std::string what;
  // Called on the configuration before the handle is made: callbacks, opaque. May be empty.
  std::function<void(rd_kafka_conf_t*)> configure;
};

// A new librdkafka handle; the caller owns it (rd_kafka_destroy). Its log lines go through
// kafka_log.h, which remembers its authentication and TLS failures. InvalidArgument "<what>:
// option 'kafka.<name>': <librdkafka's reason>" (or "setting '<name>'") for a refused property,
// "<what>: <reason>" when librdkafka cannot make the handle.
Result<rd_kafka_t*> NewKafkaHandle(const KafkaHandleSpec& spec);

// The properties a second client of the same cluster needs from a user's config: how to reach
// it and how to authenticate (bootstrap.servers, client.id, security.*, sasl.*, ssl.*), without
// the producer's or consumer's own settings.
std::map<std::string, std::string> ConnectionSettings(
    const std::map<std::string, std::string>& config);

}  // namespace sluice::kafka
