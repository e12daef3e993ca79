// Kafka authentication against a real Apache Kafka broker (scripts/kafka-secure.sh, started by
// run.sh, which sets SLUICE_KAFKA_SECURE_ENV to its broker.env): for each way Databricks users
// configure MSK (SASL_SSL with SCRAM-SHA-256/512 and PLAIN, SASL_PLAINTEXT, SSL with a PEM or a
// PKCS#12 truststore, mutual TLS with a PKCS#12 or PEM keystore, OAUTHBEARER's unsecured JWT),
// a Kafka source reads records produced to the broker and the Kafka sink writes them back, with
// exactly the option spelling of a notebook (kafka.sasl.jaas.config = "kafkashaded.org.apache.
// kafka.common.security.scram.ScramLoginModule required username=... password=...;"). A wrong
// password fails the query naming authentication (without the password); JKS is refused with
// the conversion; hostname verification is on unless ssl.endpoint.identification.algorithm="".
//
// SCRAM and the linked librdkafka: librdkafka before 2.6.1 fails SCRAM against Kafka 4 brokers
// even with the right password (its issue 4895); Sluice links the pinned newer one that
// scripts/librdkafka.sh builds, and the SCRAM cases expect the records.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "fs/test_util.h"
#include "kafka/kafka_handle.h"
#include "sluice/sluice.h"
#include "sql/session.h"

namespace sluice {
namespace {

using Options = std::map<std::string, std::string>;

std::map<std::string, std::string> BrokerEnv() {
  std::map<std::string, std::string> env;
  const char* path = std::getenv("SLUICE_KAFKA_SECURE_ENV");
  if (path == nullptr) return env;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string v = line.substr(eq + 1);
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    env[line.substr(0, eq)] = v;
  }
  return env;
}

const std::map<std::string, std::string>& Env() {
  static const auto env = BrokerEnv();
  return env;
}

std::string E(const std::string& key) {
  auto it = Env().find(key);
  return it == Env().end() ? "" : it->second;
}

// Topics are unique to the run: the broker may have served an earlier run.
std::string Topic(const std::string& name) {
  static const std::string run =
      std::to_string(::getpid()) + "-" +
      std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000000);
  return name + "-" + run;
}

std::string ScramJaas(const std::string& user, const std::string& password) {
  return "kafkashaded.org.apache.kafka.common.security.scram.ScramLoginModule required "
         "username=\"" +
         user + "\" password=\"" + password + "\";";
}
std::string PlainJaas(const std::string& user, const std::string& password) {
  return "kafkashaded.org.apache.kafka.common.security.plain.PlainLoginModule required "
         "username=\"" +
         user + "\" password=\"" + password + "\";";
}

// Records produced through the broker's unauthenticated INTERNAL listener.
void Produce(const std::string& topic, int n) {
  kafka::KafkaHandleSpec spec;
  spec.type = RD_KAFKA_PRODUCER;
  spec.what = "test producer";
  spec.user = {{"bootstrap.servers", E("INTERNAL")}};
  auto rk = kafka::NewKafkaHandle(spec);
  ASSERT_TRUE(rk.ok()) << rk.status().ToString();
  for (int i = 0; i < n; ++i) {
    std::string k = "k" + std::to_string(i), v = topic + "-" + std::to_string(i);
    ASSERT_EQ(
        rd_kafka_producev(*rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_KEY(k.data(), k.size()),
                          RD_KAFKA_V_VALUE(v.data(), v.size()),
                          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
        RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  ASSERT_EQ(rd_kafka_flush(*rk, 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_destroy(*rk);
}

std::vector<std::string> Want(const std::string& topic, int n) {
  std::vector<std::string> want;
  for (int i = 0; i < n; ++i)
    want.push_back("k" + std::to_string(i) + "," + topic + "-" + std::to_string(i));
  std::sort(want.begin(), want.end());
  return want;
}

class KafkaAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(E("INTERNAL").empty())
        << "SLUICE_KAFKA_SECURE_ENV does not name a running secure broker's broker.env: run "
           "this suite through test/interop/kafka_auth/run.sh (ctest -L interop; the broker "
           "comes from `make peers`)";
    static bool said = [] {
      std::printf("librdkafka %s\n", rd_kafka_version_str());
      return true;
    }();
    (void)said;
    auto s = Session::Open({.warehouse = dir_.Join("wh")});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    session_ = std::move(*s);
  }

  DataFrame Read(const std::string& bootstrap, const Options& auth, const std::string& topic) {
    auto r = session_->ReadStream()
                 .Format("kafka")
                 .Option("kafka.bootstrap.servers", bootstrap)
                 .Option("subscribe", topic)
                 .Option("startingOffsets", "earliest");
    for (const auto& [k, v] : auth) r.Option(k, v);
    return r.Load();
  }

  // Reads `topic` through the authenticated listener into a memory table; its rows, or the
  // query's error.
  Result<std::vector<std::string>> ReadAll(const std::string& bootstrap, const Options& auth,
                                           const std::string& topic) {
    DataFrame in = Read(bootstrap, auth, topic);
    SLUICE_RETURN_NOT_OK(in.status());
    const std::string name = "m" + std::to_string(++queries_);
    SLUICE_ASSIGN_OR_RETURN(auto q, in.SelectExpr({"decode(key) AS k", "decode(value) AS v"})
                                        .WriteStream()
                                        .Format("memory")
                                        .QueryName(name)
                                        .Option("checkpointLocation", dir_.Join(name))
                                        .Trigger(Trigger::AvailableNow())
                                        .Start());
    SLUICE_RETURN_NOT_OK(q->AwaitTermination());
    SLUICE_ASSIGN_OR_RETURN(auto rows, session_->Table(name).Collect());
    std::vector<std::string> got = rows.RowStrings();
    std::sort(got.begin(), got.end());
    return got;
  }

  // Copies `from` to `to` with the source and the sink both on the authenticated listener.
  Status Copy(const std::string& bootstrap, const Options& auth, const std::string& from,
              const std::string& to) {
    DataFrame in = Read(bootstrap, auth, from);
    SLUICE_RETURN_NOT_OK(in.status());
    auto w = in.SelectExpr({"key", "value"})
                 .WriteStream()
                 .Format("kafka")
                 .Option("kafka.bootstrap.servers", bootstrap)
                 .Option("topic", to)
                 .Option("checkpointLocation", dir_.Join("copy-" + to))
                 .Trigger(Trigger::AvailableNow());
    for (const auto& [k, v] : auth) w.Option(k, v);
    SLUICE_ASSIGN_OR_RETURN(auto q, w.Start());
    return q->AwaitTermination();
  }

  // The whole round: records in, read through `auth`, copied through `auth` by the sink, the
  // copy read back through the unauthenticated listener.
  void RoundTrip(const std::string& name, const std::string& bootstrap, const Options& auth) {
    const std::string in = Topic(name + "-in"), out = Topic(name + "-out");
    Produce(in, 7);
    auto got = ReadAll(bootstrap, auth, in);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, Want(in, 7));
    Status copied = Copy(bootstrap, auth, in, out);
    ASSERT_TRUE(copied.ok()) << copied.ToString();
    auto back = ReadAll(E("INTERNAL"), {}, out);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, Want(in, 7));
  }

  fs::ScopedTempDir dir_{"sluice-kafka-auth"};
  std::unique_ptr<Session> session_;
  int queries_ = 0;
};

// The SCRAM cases below need librdkafka 2.6.1 or later (scripts/librdkafka.sh pins it).
TEST_F(KafkaAuthTest, TheLinkedLibrdkafkaCanDoScramWithKafka4) {
  EXPECT_GE(rd_kafka_version(), 0x020601ff) << "librdkafka " << rd_kafka_version_str();
}

TEST_F(KafkaAuthTest, SaslSslScramSha256WithAPemTruststore) {
  RoundTrip("scram256", E("SASL_SSL"),
            {{"kafka.security.protocol", "SASL_SSL"},
             {"kafka.sasl.mechanism", "SCRAM-SHA-256"},
             {"kafka.sasl.jaas.config", ScramJaas("alice", "alice-secret-1")},
             {"kafka.ssl.truststore.type", "PEM"},
             {"kafka.ssl.truststore.location", E("CA_PEM")}});
}

TEST_F(KafkaAuthTest, SaslSslScramSha512WithAPkcs12Truststore) {
  RoundTrip("scram512", E("SASL_SSL"),
            {{"kafka.security.protocol", "SASL_SSL"},
             {"kafka.sasl.mechanism", "SCRAM-SHA-512"},
             {"kafka.sasl.jaas.config", ScramJaas("bob", "bob-secret-2")},
             {"kafka.ssl.truststore.type", "PKCS12"},
             {"kafka.ssl.truststore.location", E("CA_P12")},
             {"kafka.ssl.truststore.password", E("TRUSTSTORE_PASSWORD")}});
}

// The SQL spelling: a read_kafka streaming table with the options in WITH (...), as a
// Databricks SQL user writes them.
TEST_F(KafkaAuthTest, SqlStreamingTableWithTheNotebookSpelling) {
  const std::string topic = Topic("sql-in");
  Produce(topic, 5);
  const std::string mechanism = "SCRAM-SHA-512";
  const std::string jaas = ScramJaas("alice", "alice-secret-1");
  sql::SessionOptions options;
  options.warehouse = dir_.Join("sqlwh");
  auto session = sql::Session::Open(options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto run = [&](const std::string& text) {
    auto r = (*session)->Execute(text);
    EXPECT_TRUE(r.ok()) << text << ": " << r.status().ToString();
    return r.ok() ? std::move(*r) : engine::Batch();
  };
  run("CREATE STREAMING TABLE bronze AS SELECT decode(key) AS k, decode(value) AS v "
      "FROM STREAM read_kafka(bootstrapServers => '" +
      E("SASL_SSL") + "', subscribe => '" + topic +
      "', startingOffsets => 'earliest') WITH ("
      "'kafka.security.protocol' = 'SASL_SSL', 'kafka.sasl.mechanism' = '" +
      mechanism + "', 'kafka.sasl.jaas.config' = '" + jaas +
      "', 'kafka.ssl.truststore.type' = 'PKCS12', 'kafka.ssl.truststore.location' = '" +
      E("CA_P12") + "', 'kafka.ssl.truststore.password' = '" + E("TRUSTSTORE_PASSWORD") + "')");
  run("REFRESH STREAMING TABLE bronze");
  engine::Batch b = run("SELECT string_agg(k || ',' || v, ';' ORDER BY k) FROM bronze");
  ASSERT_EQ(b.num_rows(), 1u);
  std::string want;
  for (const std::string& row : Want(topic, 5)) want += (want.empty() ? "" : ";") + row;
  EXPECT_EQ(b.GetString(0, 0).value_or("NULL"), want);
}

TEST_F(KafkaAuthTest, SaslSslPlain) {
  RoundTrip("plain-ssl", E("SASL_SSL"),
            {{"kafka.security.protocol", "SASL_SSL"},
             {"kafka.sasl.mechanism", "PLAIN"},
             {"kafka.sasl.jaas.config", PlainJaas("alice", "alice-secret-1")},
             {"kafka.ssl.truststore.type", "PEM"},
             {"kafka.ssl.truststore.location", E("CA_PEM")}});
}

TEST_F(KafkaAuthTest, SaslPlaintextPlain) {
  RoundTrip("plain", E("SASL_PLAINTEXT"),
            {{"kafka.security.protocol", "SASL_PLAINTEXT"},
             {"kafka.sasl.mechanism", "PLAIN"},
             {"kafka.sasl.jaas.config",
              "org.apache.kafka.common.security.plain.PlainLoginModule required username='bob' "
              "password='bob-secret-2';"}});
}

TEST_F(KafkaAuthTest, SaslPlaintextOAuthBearerUnsecuredJwt) {
  RoundTrip("oauth", E("SASL_PLAINTEXT"),
            {{"kafka.security.protocol", "SASL_PLAINTEXT"},
             {"kafka.sasl.mechanism", "OAUTHBEARER"},
             {"kafka.sasl.jaas.config",
              "kafkashaded.org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
              "required unsecuredLoginStringClaim_sub=\"alice\";"}});
}

TEST_F(KafkaAuthTest, SslWithAPemTruststore) {
  RoundTrip("ssl-pem", E("SSL"),
            {{"kafka.security.protocol", "SSL"},
             {"kafka.ssl.truststore.type", "PEM"},
             {"kafka.ssl.truststore.location", E("CA_PEM")}});
}

TEST_F(KafkaAuthTest, MutualTlsWithPkcs12Stores) {
  RoundTrip("mtls-p12", E("MTLS"),
            {{"kafka.security.protocol", "SSL"},
             {"kafka.ssl.truststore.type", "PKCS12"},
             {"kafka.ssl.truststore.location", E("CA_P12")},
             {"kafka.ssl.truststore.password", E("TRUSTSTORE_PASSWORD")},
             {"kafka.ssl.keystore.type", "PKCS12"},
             {"kafka.ssl.keystore.location", E("CLIENT_P12")},
             {"kafka.ssl.keystore.password", E("KEYSTORE_PASSWORD")},
             {"kafka.ssl.key.password", E("KEYSTORE_PASSWORD")}});
}

TEST_F(KafkaAuthTest, MutualTlsWithAPemKeystore) {
  RoundTrip("mtls-pem", E("MTLS"),
            {{"kafka.security.protocol", "SSL"},
             {"kafka.ssl.truststore.type", "PEM"},
             {"kafka.ssl.truststore.location", E("CA_PEM")},
             {"kafka.ssl.keystore.type", "PEM"},
             {"kafka.ssl.keystore.location", E("CLIENT_PEM")}});
}

TEST_F(KafkaAuthTest, MutualTlsWithoutAClientCertificateFailsNamingTls) {
  const std::string topic = Topic("mtls-none-in");
  Produce(topic, 1);
  auto got = ReadAll(E("MTLS"),
                     {{"kafka.security.protocol", "SSL"},
                      {"kafka.ssl.truststore.type", "PEM"},
                      {"kafka.ssl.truststore.location", E("CA_PEM")}},
                     topic);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("(authentication or TLS)"), std::string::npos)
      << got.status().ToString();
}

TEST_F(KafkaAuthTest, HostnameVerificationIsOnUnlessTheAlgorithmIsEmpty) {
  const Options tls = {{"kafka.security.protocol", "SSL"},
                       {"kafka.ssl.truststore.type", "PEM"},
                       {"kafka.ssl.truststore.location", E("CA_PEM")}};
  const std::string topic = Topic("nohost-in");
  Produce(topic, 3);
  auto refused = ReadAll(E("NOHOST"), tls, topic);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("certificate verify failed"), std::string::npos)
      << refused.status().ToString();
  Options no_check = tls;
  no_check["kafka.ssl.endpoint.identification.algorithm"] = "";
  auto got = ReadAll(E("NOHOST"), no_check, topic);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, Want(topic, 3));
}

TEST_F(KafkaAuthTest, AWrongPasswordFailsTheQueryNamingAuthenticationNotThePassword) {
  const std::string wrong = "Wrong-Pa55-" + std::to_string(std::rand() % 1000);
  const std::string topic = Topic("wrongpw-in");
  Produce(topic, 2);
  const Options auth = {{"kafka.security.protocol", "SASL_SSL"},
                        {"kafka.sasl.mechanism", "PLAIN"},
                        {"kafka.sasl.jaas.config", PlainJaas("alice", wrong)},
                        {"kafka.ssl.truststore.type", "PEM"},
                        {"kafka.ssl.truststore.location", E("CA_PEM")}};
  auto start = std::chrono::steady_clock::now();
  auto got = ReadAll(E("SASL_SSL"), auth, topic);
  ASSERT_FALSE(got.ok());
  std::string m = got.status().message();
  EXPECT_NE(m.find("SASL authentication error: Authentication failed"), std::string::npos) << m;
  EXPECT_EQ(m.find(wrong), std::string::npos) << m;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  // The sink: a good source, a sink with the wrong password, fails fast naming authentication.
  const Options good = {{"kafka.security.protocol", "SASL_SSL"},
                        {"kafka.sasl.mechanism", "PLAIN"},
                        {"kafka.sasl.jaas.config", PlainJaas("alice", "alice-secret-1")},
                        {"kafka.ssl.truststore.type", "PEM"},
                        {"kafka.ssl.truststore.location", E("CA_PEM")}};
  DataFrame in = Read(E("SASL_SSL"), good, topic);
  ASSERT_TRUE(in.status().ok()) << in.status().ToString();
  auto w = in.SelectExpr({"key", "value"})
               .WriteStream()
               .Format("kafka")
               .Option("kafka.bootstrap.servers", E("SASL_SSL"))
               .Option("topic", Topic("wrongpw-out"))
               .Option("checkpointLocation", dir_.Join("wrong-sink"))
               .Trigger(Trigger::AvailableNow());
  for (const auto& [k, v] : auth) w.Option(k, v);
  start = std::chrono::steady_clock::now();
  auto q = w.Start();
  Status st = q.ok() ? (*q)->AwaitTermination() : q.status();
  ASSERT_FALSE(st.ok());
  m = st.message();
  EXPECT_NE(m.find("authentication or TLS failed: "), std::string::npos) << m;
  EXPECT_NE(m.find("SASL authentication error"), std::string::npos) << m;
  EXPECT_EQ(m.find(wrong), std::string::npos) << m;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

TEST_F(KafkaAuthTest, JksIsRefusedWithTheConversion) {
  DataFrame in = Read(E("SSL"),
                      {{"kafka.security.protocol", "SSL"},
                       {"kafka.ssl.truststore.location", E("CA_JKS")},
                       {"kafka.ssl.truststore.password", E("TRUSTSTORE_PASSWORD")}},
                      "jks-in");
  Status st = in.status();
  if (st.ok()) {
    auto q = in.WriteStream()
                 .Format("memory")
                 .QueryName("jks")
                 .Option("checkpointLocation", dir_.Join("jks"))
                 .Trigger(Trigger::AvailableNow())
                 .Start();
    st = q.ok() ? (*q)->AwaitTermination() : q.status();
  }
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("option 'kafka.ssl.truststore.location': JKS keystores are not "
                              "supported; convert with `keytool -importkeystore -srckeystore " +
                              E("CA_JKS")),
            std::string::npos)
      << st.ToString();
  EXPECT_EQ(st.message().find(E("TRUSTSTORE_PASSWORD")), std::string::npos);
}

TEST_F(KafkaAuthTest, AwsMskIamIsRefused) {
  DataFrame in = Read(E("SASL_SSL"),
                      {{"kafka.security.protocol", "SASL_SSL"},
                       {"kafka.sasl.mechanism", "AWS_MSK_IAM"},
                       {"kafka.sasl.jaas.config",
                        "shadedmskiam.software.amazon.msk.auth.iam.IAMLoginModule required;"},
                       {"kafka.sasl.client.callback.handler.class",
                        "shadedmskiam.software.amazon.msk.auth.iam.IAMClientCallbackHandler"}},
                      "iam-in");
  Status st = in.status();
  if (st.ok()) {
    auto q = in.WriteStream()
                 .Format("memory")
                 .QueryName("iam")
                 .Option("checkpointLocation", dir_.Join("iam"))
                 .Trigger(Trigger::AvailableNow())
                 .Start();
    st = q.ok() ? (*q)->AwaitTermination() : q.status();
  }
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("AWS MSK IAM authentication"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("Use SASL/SCRAM instead"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace sluice
