#include "kafka/kafka_handle.h"

#include "kafka/kafka_log.h"
#include "kafka/kafka_security_conf.h"

namespace sluice::kafka {

Result<rd_kafka_t*> NewKafkaHandle(const KafkaHandleSpec& spec) {
  // The Java client's security options (sasl.jaas.config, ssl.truststore.*, ...) in librdkafka's
  // terms; the errors never repeat a secret.
  auto user = TranslateKafkaSecurityConfig(spec.user);
  if (!user.ok()) return Status(user.status().code(), spec.what + ": " + user.status().message());
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  InstallKafkaLog(conf);
  char errstr[512];
  auto set = [&](const std::string& name, const std::string& value, bool from_user) -> Status {
    if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), errstr, sizeof(errstr)) ==
        RD_KAFKA_CONF_OK) {
      return Status::OK();
    }
    // The value is not repeated: it may be a secret.
    return Status::InvalidArgument(spec.what + ": " + (from_user ? "option 'kafka." : "setting '") +
                                   name + "': " + errstr);
  };
  Status st;
  for (const auto& [k, v] : spec.defaults) {
    if (st.ok() && !user->count(k)) st = set(k, v, false);
  }
  for (const auto& [k, v] : *user) {
    if (st.ok()) st = set(k, v, true);
  }
  if (!st.ok()) {
    rd_kafka_conf_destroy(conf);
    return st;
  }
  if (spec.configure) spec.configure(conf);
  rd_kafka_t* rk = rd_kafka_new(spec.type, conf, errstr, sizeof(errstr));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);  // rd_kafka_new takes it only on success
    return Status::InvalidArgument(spec.what + ": " + errstr);
  }
  return rk;
}

std::map<std::string, std::string> ConnectionSettings(
    const std::map<std::string, std::string>& config) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : config) {
    if (k == "bootstrap.servers" || k == "client.id" || k.rfind("security.", 0) == 0 ||
        k.rfind("sasl.", 0) == 0 || k.rfind("ssl.", 0) == 0) {
      out[k] = v;
    }
  }
  return out;
}

}  // namespace sluice::kafka
