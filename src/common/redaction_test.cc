#include "common/redaction.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(RedactionTest, SparksRuleAndKafkaKeyMaterial) {
  for (const char* name :
       {"kafka.sasl.password", "kafka.ssl.key.password", "kafka.ssl.truststore.password",
        "kafka.sasl.jaas.config", "KAFKA.SASL.JAAS.CONFIG", "kafka.ssl.key.pem",
        "kafka.sasl.oauthbearer.config", "kafka.ssl.keystore.key", "fs.s3a.access.key",
        "fs.s3a.secret.key", "spark.databricks.token", "clientSecret", "auth_token"}) {
    EXPECT_TRUE(IsSecretOptionName(name)) << name;
  }
  for (const char* name : {"kafka.bootstrap.servers", "subscribe", "kafka.sasl.mechanism",
                           "kafka.ssl.keystore.location", "path", "keys", "accesskey"}) {
    EXPECT_FALSE(IsSecretOptionName(name)) << name;
  }
}

TEST(RedactionTest, RedactOptionsReplacesOnlySecretValues) {
  auto out = RedactOptions({{"kafka.sasl.password", "hunter2"}, {"subscribe", "orders"}});
  EXPECT_EQ(out["kafka.sasl.password"], kRedactedValue);
  EXPECT_EQ(out["subscribe"], "orders");
}

TEST(RedactionTest, RedactSecretValuesInText) {
  std::map<std::string, std::string> opts = {{"kafka.sasl.password", "hunter2"},
                                             {"subscribe", "orders"},
                                             {"kafka.ssl.key.password", "ab"}};
  EXPECT_EQ(RedactSecretValues("login hunter2 failed for orders (hunter2) ab", opts),
            std::string("login ") + std::string(kRedactedValue) + " failed for orders (" +
                std::string(kRedactedValue) + ") ab");
  EXPECT_EQ(RedactSecretValues("nothing here", opts), "nothing here");
  Status st = RedactSecretValues(Status::IOError("auth hunter2"), opts);
  EXPECT_TRUE(st.IsIOError());
  EXPECT_EQ(st.message(), "auth " + std::string(kRedactedValue));
}

}  // namespace
}  // namespace sluice
