// The Java client's Kafka security options in librdkafka's terms: the JAAS parser, the store
// files, the translation and its refusals, and that no error repeats a secret. The real broker
// with SASL and TLS is in test/interop/kafka_auth.
#include "kafka/kafka_security_conf.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include <chrono>
#include <fstream>
#include <map>
#include <string>

#include "fs/test_util.h"
#include "kafka/kafka_handle.h"
#include "kafka/kafka_jaas.h"
#include "kafka/kafka_log.h"
#include "kafka/kafka_tls_store.h"

namespace sluice::kafka {
namespace {

using Config = std::map<std::string, std::string>;

constexpr const char* kSecret = "s3cr3t-Pa55";

std::string Message(const Status& st) { return st.message(); }

// The error of a translation that must fail; it must never contain the secret.
std::string Refusal(const Config& user, const KafkaSecurityCapabilities& caps = {}) {
  auto r = TranslateKafkaSecurityConfig(user, caps);
  EXPECT_FALSE(r.ok()) << "translated although it should not";
  if (r.ok()) return "";
  const std::string m = Message(r.status());
  EXPECT_EQ(m.find(kSecret), std::string::npos) << m;
  return m;
}

Config Translated(const Config& user, const KafkaSecurityCapabilities& caps = {}) {
  auto r = TranslateKafkaSecurityConfig(user, caps);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : Config{};
}

std::string ScramJaas(const std::string& password = kSecret) {
  return "kafkashaded.org.apache.kafka.common.security.scram.ScramLoginModule required "
         "username=\"alice\" password=\"" +
         password + "\";";
}

// --- JAAS ---------------------------------------------------------------------------------------

TEST(KafkaJaasTest, ParsesTheDatabricksSpelling) {
  auto e = ParseJaasConfig(ScramJaas());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->login_module, "kafkashaded.org.apache.kafka.common.security.scram.ScramLoginModule");
  EXPECT_EQ(e->control_flag, "required");
  EXPECT_EQ(e->options,
            (std::map<std::string, std::string>{{"username", "alice"}, {"password", kSecret}}));
}

TEST(KafkaJaasTest, QuotesWordsBlanksCommentsAndFlags) {
  auto e = ParseJaasConfig(
      "\n  org.apache.kafka.common.security.plain.PlainLoginModule\tREQUIRED // the module\n"
      " username=bob-1 /* a comment */ password='x y' extra_key=$x.y ;  ");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->login_module, "org.apache.kafka.common.security.plain.PlainLoginModule");
  EXPECT_EQ(e->control_flag, "required");
  EXPECT_EQ(e->options, (std::map<std::string, std::string>{
                            {"username", "bob-1"}, {"password", "x y"}, {"extra_key", "$x.y"}}));
  // 'it''s' is two quoted tokens in Java's tokenizer too; the second is then a key without '='.
  EXPECT_FALSE(ParseJaasConfig("m required a='it''s';").ok());
  auto f = ParseJaasConfig("m optional;");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->control_flag, "optional");
  for (const char* flag : {"requisite", "Sufficient"}) {
    auto g = ParseJaasConfig(std::string("m ") + flag + ";");
    ASSERT_TRUE(g.ok()) << flag;
    EXPECT_TRUE(g->options.empty());
  }
  // A repeated key keeps its last value, as the Kafka client's HashMap does.
  auto h = ParseJaasConfig("m required k=\"1\" k=\"2\";");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->options.at("k"), "2");
}

TEST(KafkaJaasTest, EscapesAsJavasStreamTokenizer) {
  auto e = ParseJaasConfig(R"(m required p="a\"b\\c\nd\te\101\7z\q" s='x\'y';)");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->options.at("p"), std::string("a\"b\\c\nd\teA\7zq"));
  EXPECT_EQ(e->options.at("s"), "x'y");
}

TEST(KafkaJaasTest, MalformedStringsNameThePositionNeverTheText) {
  struct Case {
    std::string text;
    std::string what;
    int position;
  };
  const std::string p = kSecret;
  const std::vector<Case> cases = {
      {"org.x.M required username=\"u\" password=\"" + p + "\"", "not terminated by ';'", 53},
      {"org.x.M username=\"u\";", "control flag", 9},
      {"org.x.M mandatory;", "control flag", 9},
      {"org.x.M required username \"" + p + "\";", "'=' expected", 27},
      {"org.x.M required password=;", "no value for the option 'password'", 27},
      {"org.x.M required password=\"" + p + "\n\";", "unterminated quoted value", 27},
      {"org.x.M required password=\"" + p, "unterminated quoted value", 27},
      {"org.x.M required; org.y.N required;", "exactly one login module", 19},
      {"org.x.M required password=" + p + "!;", "unexpected character", 38},
      {"org.x.M required password=12" + p + ";", "starting with a digit", 27},
      {"org.x.M required /* " + p + ";", "unterminated /* comment", 18},
      {"=", "login module class name expected", 1},
  };
  for (const auto& c : cases) {
    auto e = ParseJaasConfig(c.text);
    ASSERT_FALSE(e.ok()) << c.text;
    const std::string m = Message(e.status());
    EXPECT_NE(m.find("option 'kafka.sasl.jaas.config'"), std::string::npos) << m;
    EXPECT_NE(m.find(c.what), std::string::npos) << m;
    EXPECT_NE(m.find("at position " + std::to_string(c.position)), std::string::npos) << m;
    EXPECT_EQ(m.find(p), std::string::npos) << m;
  }
  auto empty = ParseJaasConfig("  // nothing\n");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(Message(empty.status()).find("names no login module"), std::string::npos);
}

// --- SASL ---------------------------------------------------------------------------------------

TEST(KafkaSecurityConfTest, ScramAndPlainLoginModulesBecomeUsernameAndPassword) {
  for (const char* mech : {"SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"}) {
    Config out = Translated({{"bootstrap.servers", "b:9092"},
                             {"security.protocol", "sasl_ssl"},
                             {"sasl.mechanism", mech},
                             {"sasl.jaas.config", ScramJaas()}});
    EXPECT_EQ(out, (Config{{"bootstrap.servers", "b:9092"},
                           {"security.protocol", "SASL_SSL"},
                           {"sasl.mechanisms", mech},
                           {"sasl.username", "alice"},
                           {"sasl.password", kSecret}}))
        << mech;
  }
  Config plain = Translated(
      {{"security.protocol", "SASL_PLAINTEXT"},
       {"sasl.mechanisms", "PLAIN"},
       {"sasl.jaas.config",
        "org.apache.kafka.common.security.plain.PlainLoginModule required username='bob' "
        "password='pw';"}});
  EXPECT_EQ(plain.at("sasl.username"), "bob");
  EXPECT_EQ(plain.at("sasl.password"), "pw");
  EXPECT_EQ(plain.at("sasl.mechanisms"), "PLAIN");
  // librdkafka's own names pass through.
  Config native = Translated({{"security.protocol", "SASL_SSL"},
                              {"sasl.mechanism", "PLAIN"},
                              {"sasl.username", "u"},
                              {"sasl.password", "p"},
                              {"ssl.ca.location", "/ca.pem"}});
  EXPECT_EQ(native.at("ssl.ca.location"), "/ca.pem");
  EXPECT_EQ(native.at("sasl.username"), "u");
}

TEST(KafkaSecurityConfTest, ProtocolMechanismAndModuleAreChecked) {
  EXPECT_NE(Refusal({{"security.protocol", "TLS"}}).find("'TLS' is not one of PLAINTEXT, SSL"),
            std::string::npos);
  EXPECT_NE(Refusal({{"sasl.mechanism", "scram-sha-512"}}).find("case-sensitive"),
            std::string::npos);
  EXPECT_NE(Refusal({{"sasl.mechanism", "PLAIN"}, {"sasl.mechanisms", "PLAIN"}}).find("not both"),
            std::string::npos);
  EXPECT_NE(Refusal({{"security.protocol", "SASL_SSL"}, {"sasl.jaas.config", ScramJaas()}})
                .find("not set (the Kafka client's default is GSSAPI)"),
            std::string::npos);
  EXPECT_NE(Refusal({{"security.protocol", "SASL_SSL"},
                     {"sasl.mechanism", "OAUTHBEARER"},
                     {"sasl.jaas.config", ScramJaas()}})
                .find("kafka.sasl.mechanism is OAUTHBEARER but the login module is "
                      "ScramLoginModule"),
            std::string::npos);
  EXPECT_NE(Refusal({{"security.protocol", "SASL_SSL"}, {"sasl.mechanism", "SCRAM-SHA-256"}})
                .find("SCRAM-SHA-256 needs credentials"),
            std::string::npos);
  EXPECT_NE(Refusal({{"security.protocol", "SASL_SSL"},
                     {"sasl.mechanism", "PLAIN"},
                     {"sasl.username", "x"},
                     {"sasl.jaas.config", ScramJaas()}})
                .find("option 'kafka.sasl.jaas.config': conflicts with option "
                      "'kafka.sasl.username'"),
            std::string::npos);
  EXPECT_NE(Refusal({{"security.protocol", "SASL_SSL"},
                     {"sasl.mechanism", "SCRAM-SHA-512"},
                     {"sasl.jaas.config",
                      "org.apache.kafka.common.security.scram.ScramLoginModule required "
                      "username=\"alice\" password=\"" +
                          std::string(kSecret) + "\" tokenauth=true;"}})
                .find("delegation tokens"),
            std::string::npos);
  EXPECT_NE(Refusal({{"security.protocol", "SASL_SSL"},
                     {"sasl.mechanism", "SCRAM-SHA-512"},
                     {"sasl.jaas.config",
                      "org.apache.kafka.common.security.scram.ScramLoginModule required "
                      "username=\"alice\";"}})
                .find("ScramLoginModule needs the option 'password'"),
            std::string::npos);
  EXPECT_NE(Refusal({{"sasl.jaas.config", "com.example.MyLoginModule required;"}})
                .find("the login module 'com.example.MyLoginModule' is not supported"),
            std::string::npos);
  EXPECT_NE(Refusal({{"sasl.jaas.config",
                      "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;"}})
                .find("kafka.sasl.kerberos.keytab"),
            std::string::npos);
  EXPECT_NE(Refusal({{"sasl.client.callback.handler.class", "com.example.Handler"}})
                .find("is a Java class, which Sluice cannot load"),
            std::string::npos);
  // A malformed JAAS string through the translation: named, positioned, not echoed.
  std::string m = Refusal({{"security.protocol", "SASL_SSL"},
                           {"sasl.mechanism", "PLAIN"},
                           {"sasl.jaas.config", ScramJaas().substr(0, ScramJaas().size() - 1)}});
  EXPECT_NE(m.find("option 'kafka.sasl.jaas.config': the entry is not terminated by ';'"),
            std::string::npos)
      << m;
}

TEST(KafkaSecurityConfTest, AwsMskIamIsRefusedNamingWhatToUseInstead) {
  const std::vector<Config> cases = {
      {{"security.protocol", "SASL_SSL"}, {"sasl.mechanism", "AWS_MSK_IAM"}},
      {{"security.protocol", "SASL_SSL"},
       {"sasl.jaas.config", "shadedmskiam.software.amazon.msk.auth.iam.IAMLoginModule required;"}},
      {{"sasl.client.callback.handler.class",
        "shadedmskiam.software.amazon.msk.auth.iam.IAMClientCallbackHandler"}},
      {{"sasl.mechanism", "OAUTHBEARER"},
       {"sasl.login.callback.handler.class",
        "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler"}},
  };
  for (const auto& c : cases) {
    std::string m = Refusal(c);
    EXPECT_NE(m.find("AWS MSK IAM authentication"), std::string::npos) << m;
    EXPECT_NE(m.find("is not supported"), std::string::npos) << m;
    EXPECT_NE(m.find("SCRAM-SHA-512"), std::string::npos) << m;
    EXPECT_NE(m.find("mutual TLS"), std::string::npos) << m;
  }
}

TEST(KafkaSecurityConfTest, OAuthBearerUnsecuredJwt) {
  Config out = Translated(
      {{"security.protocol", "SASL_PLAINTEXT"},
       {"sasl.mechanism", "OAUTHBEARER"},
       {"sasl.jaas.config",
        "kafkashaded.org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
        "required unsecuredLoginStringClaim_sub=\"alice\" unsecuredLoginListClaim_scope=\",read,"
        "write\" unsecuredLoginLifetimeSeconds=\"600\" unsecuredLoginExtension_traceId=\"t1\";"}});
  EXPECT_EQ(out.at("enable.sasl.oauthbearer.unsecure.jwt"), "true");
  EXPECT_EQ(out.at("sasl.oauthbearer.config"),
            "principalClaimName=sub principal=alice lifeSeconds=600 scopeClaimName=scope "
            "scope=read,write extension_traceId=t1");
  EXPECT_FALSE(out.count("sasl.jaas.config"));
  Config azp =
      Translated({{"sasl.mechanism", "OAUTHBEARER"},
                  {"sasl.jaas.config",
                   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
                   "unsecuredLoginPrincipalClaimName=azp unsecuredLoginStringClaim_azp=svc;"}});
  EXPECT_EQ(azp.at("sasl.oauthbearer.config"), "principalClaimName=azp principal=svc");
  const std::string module =
      "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ";
  EXPECT_NE(Refusal({{"sasl.mechanism", "OAUTHBEARER"}, {"sasl.jaas.config", module + ";"}})
                .find("needs the option 'unsecuredLoginStringClaim_sub'"),
            std::string::npos);
  EXPECT_NE(Refusal({{"sasl.mechanism", "OAUTHBEARER"},
                     {"sasl.jaas.config", module + "unsecuredLoginStringClaim_sub=a "
                                                   "unsecuredLoginStringClaim_iss=b;"}})
                .find("'unsecuredLoginStringClaim_iss' cannot be translated"),
            std::string::npos);
  EXPECT_NE(Refusal({{"sasl.mechanism", "OAUTHBEARER"},
                     {"sasl.jaas.config", module + "unsecuredLoginStringClaim_sub=\"a b\";"}})
                .find("holds a blank or '='"),
            std::string::npos);
  EXPECT_NE(Refusal({{"security.protocol", "SASL_SSL"},
                     {"sasl.mechanism", "PLAIN"},
                     {"sasl.jaas.config", module + "unsecuredLoginStringClaim_sub=a;"}})
                .find("set kafka.sasl.mechanism=OAUTHBEARER"),
            std::string::npos);
  EXPECT_NE(Refusal({{"sasl.mechanism", "OAUTHBEARER"},
                     {"sasl.login.callback.handler.class", "com.example.TokenHandler"},
                     {"sasl.jaas.config", module + "unsecuredLoginStringClaim_sub=a;"}})
                .find("only OAuthBearerLoginCallbackHandler (OIDC) is supported"),
            std::string::npos);
}

TEST(KafkaSecurityConfTest, OAuthBearerOidcWhereLibrdkafkaHasIt) {
  const Config user = {
      {"security.protocol", "SASL_SSL"},
      {"sasl.mechanism", "OAUTHBEARER"},
      {"sasl.login.callback.handler.class",
       "kafkashaded.org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"},
      {"sasl.oauthbearer.token.endpoint.url", "https://idp.example/token"},
      {"sasl.jaas.config",
       "kafkashaded.org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
       "clientId=\"app\" clientSecret=\"" +
           std::string(kSecret) + "\" scope=\"kafka\" extension_logicalCluster=\"lkc-1\";"}};
  EXPECT_NE(Refusal(user, {.oidc = false}).find("needs librdkafka built with libcurl"),
            std::string::npos);
  Config out = Translated(user, {.oidc = true});
  EXPECT_EQ(out, (Config{{"security.protocol", "SASL_SSL"},
                         {"sasl.mechanisms", "OAUTHBEARER"},
                         {"sasl.oauthbearer.method", "oidc"},
                         {"sasl.oauthbearer.client.id", "app"},
                         {"sasl.oauthbearer.client.secret", kSecret},
                         {"sasl.oauthbearer.scope", "kafka"},
                         {"sasl.oauthbearer.extensions", "logicalCluster=lkc-1"},
                         {"sasl.oauthbearer.token.endpoint.url", "https://idp.example/token"}}));
  Config no_url = user;
  no_url.erase("sasl.oauthbearer.token.endpoint.url");
  EXPECT_NE(Refusal(no_url, {.oidc = true}).find("kafka.sasl.oauthbearer.token.endpoint.url"),
            std::string::npos);
  // What this build links decides the default.
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[256];
  bool oidc = rd_kafka_conf_set(conf, "sasl.oauthbearer.method", "oidc", err, sizeof(err)) ==
              RD_KAFKA_CONF_OK;
  rd_kafka_conf_destroy(conf);
  EXPECT_EQ(LinkedKafkaSecurityCapabilities().oidc, oidc);
}

TEST(KafkaSecurityConfTest, EndpointIdentification) {
  EXPECT_EQ(Translated({{"ssl.endpoint.identification.algorithm", ""}})
                .at("ssl.endpoint.identification.algorithm"),
            "none");
  EXPECT_EQ(Translated({{"ssl.endpoint.identification.algorithm", "HTTPS"}})
                .at("ssl.endpoint.identification.algorithm"),
            "https");
  EXPECT_NE(Refusal({{"ssl.endpoint.identification.algorithm", "ldaps"}})
                .find("'ldaps' is not supported (https, or empty for none)"),
            std::string::npos);
}

// --- Stores -------------------------------------------------------------------------------------

// A self-signed certificate and its key, made with OpenSSL.
struct TestCert {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  TestCert() {
    key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
    cert = X509_new();
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, key);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("test"), -1, -1, 0);
    X509_set_issuer_name(cert, name);
    X509_sign(cert, key, EVP_sha256());
  }
  ~TestCert() {
    X509_free(cert);
    EVP_PKEY_free(key);
  }
  std::string CertPem() const {
    BIO* b = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(b, cert);
    char* d = nullptr;
    long n = BIO_get_mem_data(b, &d);
    std::string s(d, static_cast<size_t>(n));
    BIO_free(b);
    return s;
  }
  std::string KeyPem() const {
    BIO* b = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr);
    char* d = nullptr;
    long n = BIO_get_mem_data(b, &d);
    std::string s(d, static_cast<size_t>(n));
    BIO_free(b);
    return s;
  }
  // A PKCS#12 store: with the key (a keystore) or the certificate alone (a truststore).
  std::string Pkcs12(const std::string& password, bool with_key) const {
    STACK_OF(X509)* cas = nullptr;
    PKCS12* p12 = nullptr;
    if (with_key) {
      p12 = PKCS12_create(password.c_str(), "k", key, cert, nullptr, 0, 0, 0, 0, 0);
    } else {
      cas = sk_X509_new_null();
      sk_X509_push(cas, cert);
      p12 = PKCS12_create(password.c_str(), nullptr, nullptr, nullptr, cas, 0, 0, 0, 0, 0);
      sk_X509_free(cas);
    }
    unsigned char* der = nullptr;
    int n = i2d_PKCS12(p12, &der);
    std::string s(reinterpret_cast<char*>(der), static_cast<size_t>(n));
    OPENSSL_free(der);
    PKCS12_free(p12);
    return s;
  }
};

std::string WriteFile(const fs::ScopedTempDir& dir, const std::string& name,
                      const std::string& data) {
  std::string path = dir.Join(name);
  std::ofstream(path, std::ios::binary) << data;
  return path;
}

TEST(KafkaSecurityConfTest, TruststoresInPemAndPkcs12) {
  fs::ScopedTempDir dir("sluice-kafka-tls");
  TestCert ca;
  const std::string pem = WriteFile(dir, "ca.pem", ca.CertPem());
  const std::string p12 = WriteFile(dir, "trust.p12", ca.Pkcs12(kSecret, false));
  EXPECT_EQ(Translated({{"ssl.truststore.location", pem}, {"ssl.truststore.type", "PEM"}}),
            (Config{{"ssl.ca.location", pem}}));
  // PKCS#12: its certificates as PEM text; JKS (the Kafka client's default) reads PKCS#12 too.
  for (const char* type : {"PKCS12", "pkcs12", "JKS", ""}) {
    Config user = {{"ssl.truststore.location", p12}, {"ssl.truststore.password", kSecret}};
    if (*type) user["ssl.truststore.type"] = type;
    EXPECT_EQ(Translated(user), (Config{{"ssl.ca.pem", ca.CertPem()}})) << type;
  }
  EXPECT_EQ(
      Translated({{"ssl.truststore.certificates", ca.CertPem()}, {"ssl.truststore.type", "PEM"}}),
      (Config{{"ssl.ca.pem", ca.CertPem()}}));
  std::string m = Refusal({{"ssl.truststore.location", p12},
                           {"ssl.truststore.type", "PKCS12"},
                           {"ssl.truststore.password", "wrong-" + std::string(kSecret)}});
  EXPECT_NE(m.find("cannot be read (a wrong ssl.truststore.password?)"), std::string::npos) << m;
  EXPECT_NE(Refusal({{"ssl.truststore.location", pem}})
                .find("is a PEM file: set kafka.ssl.truststore.type=PEM (the Kafka client's "
                      "default is JKS)"),
            std::string::npos);
  EXPECT_NE(Refusal({{"ssl.truststore.location", p12}, {"ssl.truststore.type", "PEM"}})
                .find("is a PKCS#12 file, not PEM: set kafka.ssl.truststore.type=PKCS12"),
            std::string::npos);
  EXPECT_NE(Refusal({{"ssl.truststore.location", pem}, {"ssl.truststore.type", "BCFKS"}})
                .find("'BCFKS' is not supported (supported: PEM, PKCS12)"),
            std::string::npos);
  EXPECT_NE(Refusal({{"ssl.truststore.location", WriteFile(dir, "x.bin", "hello")},
                     {"ssl.truststore.type", "PEM"}})
                .find("is neither a PEM, a PKCS#12 nor a JKS store"),
            std::string::npos);
  EXPECT_NE(Refusal({{"ssl.truststore.location", dir.Join("missing.pem")}})
                .find("option 'kafka.ssl.truststore.location': cannot open '" +
                      dir.Join("missing.pem") + "'"),
            std::string::npos);
  EXPECT_NE(
      Refusal({{"ssl.truststore.certificates", ca.CertPem()}, {"ssl.truststore.location", pem}})
          .find("not both"),
      std::string::npos);
  EXPECT_NE(
      Refusal({{"ssl.truststore.certificates", ca.CertPem()}, {"ssl.truststore.type", "PKCS12"}})
          .find("needs kafka.ssl.truststore.type=PEM"),
      std::string::npos);
  EXPECT_NE(Refusal({{"ssl.truststore.location", pem},
                     {"ssl.truststore.type", "PEM"},
                     {"ssl.ca.location", "/other.pem"}})
                .find("option 'kafka.ssl.ca.location': conflicts with the Java store options"),
            std::string::npos);
}

TEST(KafkaSecurityConfTest, JksAndJceksStoresAreRefusedWithTheConversion) {
  fs::ScopedTempDir dir("sluice-kafka-tls");
  const std::string jks = WriteFile(dir, "client.truststore.jks", "\xFE\xED\xFE\xED rest");
  const std::string jceks = WriteFile(dir, "keys.jceks", "\xCE\xCE\xCE\xCE rest");
  std::string m = Refusal({{"ssl.truststore.location", jks},
                           {"ssl.truststore.type", "JKS"},
                           {"ssl.truststore.password", kSecret}});
  EXPECT_NE(m.find("option 'kafka.ssl.truststore.location': JKS keystores are not supported; "
                   "convert with `keytool -importkeystore -srckeystore " +
                   jks + " -destkeystore " + dir.Join("client.truststore.p12") +
                   " -deststoretype PKCS12`"),
            std::string::npos)
      << m;
  m = Refusal({{"ssl.keystore.location", jks}, {"ssl.keystore.password", kSecret}});
  EXPECT_NE(m.find("option 'kafka.ssl.keystore.location': JKS keystores are not supported"),
            std::string::npos)
      << m;
  m = Refusal({{"ssl.keystore.location", jceks}, {"ssl.keystore.type", "JCEKS"}});
  EXPECT_NE(m.find("JCEKS keystores are not supported; convert with `keytool -importkeystore "
                   "-srckeystore " +
                   jceks + " -srcstoretype JCEKS -destkeystore " + dir.Join("keys.p12")),
            std::string::npos)
      << m;
}

TEST(KafkaSecurityConfTest, KeystoresInPkcs12AndPem) {
  fs::ScopedTempDir dir("sluice-kafka-tls");
  TestCert client;
  const std::string p12 = WriteFile(dir, "client.p12", client.Pkcs12(kSecret, true));
  const std::string pem = WriteFile(dir, "client.pem", client.KeyPem() + client.CertPem());
  EXPECT_EQ(Translated({{"ssl.keystore.location", p12},
                        {"ssl.keystore.type", "PKCS12"},
                        {"ssl.keystore.password", kSecret},
                        {"ssl.key.password", kSecret}}),
            (Config{{"ssl.keystore.location", p12}, {"ssl.keystore.password", kSecret}}));
  std::string m = Refusal({{"ssl.keystore.location", p12},
                           {"ssl.keystore.type", "PKCS12"},
                           {"ssl.keystore.password", kSecret},
                           {"ssl.key.password", "other"}});
  EXPECT_NE(m.find("option 'kafka.ssl.key.password': differs from kafka.ssl.keystore.password"),
            std::string::npos)
      << m;
  EXPECT_EQ(Translated({{"ssl.keystore.location", pem},
                        {"ssl.keystore.type", "PEM"},
                        {"ssl.key.password", kSecret}}),
            (Config{{"ssl.certificate.location", pem},
                    {"ssl.key.location", pem},
                    {"ssl.key.password", kSecret}}));
  EXPECT_EQ(Translated({{"ssl.keystore.certificate.chain", client.CertPem()},
                        {"ssl.keystore.key", client.KeyPem()},
                        {"ssl.keystore.type", "PEM"}}),
            (Config{{"ssl.certificate.pem", client.CertPem()}, {"ssl.key.pem", client.KeyPem()}}));
  m = Refusal({{"ssl.keystore.key", client.KeyPem()}});
  EXPECT_NE(m.find("needs kafka.ssl.keystore.certificate.chain and kafka.ssl.keystore.key "
                   "together"),
            std::string::npos);
  EXPECT_EQ(m.find("PRIVATE KEY"), std::string::npos) << m;
  EXPECT_NE(Refusal({{"ssl.keystore.location", p12},
                     {"ssl.keystore.type", "PKCS12"},
                     {"ssl.keystore.password", kSecret},
                     {"ssl.keystore.certificate.chain", client.CertPem()},
                     {"ssl.keystore.key", client.KeyPem()}})
                .find("not both"),
            std::string::npos);
}

TEST(KafkaSecurityConfTest, StoreFormatsAreSniffed) {
  fs::ScopedTempDir dir("sluice-kafka-tls");
  TestCert c;
  auto sniff = [&](const std::string& data) {
    auto f = SniffStoreFormat(WriteFile(dir, "f", data), "o");
    EXPECT_TRUE(f.ok());
    return f.ok() ? *f : StoreFormat::kUnknown;
  };
  EXPECT_EQ(sniff("\n  " + c.CertPem()), StoreFormat::kPem);
  EXPECT_EQ(sniff(c.Pkcs12("x", true)), StoreFormat::kPkcs12);
  EXPECT_EQ(sniff("\xFE\xED\xFE\xED"), StoreFormat::kJks);
  EXPECT_EQ(sniff("\xCE\xCE\xCE\xCE"), StoreFormat::kJceks);
  EXPECT_EQ(sniff(""), StoreFormat::kUnknown);
  auto certs = Pkcs12CertificatesAsPem(WriteFile(dir, "k.p12", c.Pkcs12("pw", true)), "pw", "o");
  ASSERT_TRUE(certs.ok()) << certs.status().ToString();
  EXPECT_EQ(*certs, c.CertPem());  // a keystore's certificate counts too; the key is dropped
  auto not_p12 = Pkcs12CertificatesAsPem(WriteFile(dir, "n", c.CertPem()), "", "o");
  ASSERT_FALSE(not_p12.ok());
  EXPECT_NE(Message(not_p12.status()).find("is not PKCS#12"), std::string::npos);
}

// --- Through NewKafkaHandle ---------------------------------------------------------------------

TEST(KafkaSecurityConfTest, NewKafkaHandleTranslatesAndPrefixesErrors) {
  KafkaHandleSpec spec;
  spec.type = RD_KAFKA_PRODUCER;
  spec.what = "kafka sink";
  spec.user = {{"bootstrap.servers", "127.0.0.1:1"},
               {"security.protocol", "SASL_SSL"},
               {"sasl.mechanism", "SCRAM-SHA-512"},
               {"sasl.jaas.config", ScramJaas()}};
  auto rk = NewKafkaHandle(spec);
  ASSERT_TRUE(rk.ok()) << rk.status().ToString();  // librdkafka took the translated properties
  rd_kafka_destroy(*rk);
  spec.user["sasl.jaas.config"] = "org.x.M required password=\"" + std::string(kSecret);
  auto bad = NewKafkaHandle(spec);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(Message(bad.status())
                .find("kafka sink: option 'kafka.sasl.jaas.config': an unterminated quoted "
                      "value at position 27"),
            std::string::npos)
      << Message(bad.status());
  EXPECT_EQ(Message(bad.status()).find(kSecret), std::string::npos);
}

// A TLS client against a plaintext listener (librdkafka's mock cluster) logs an SSL failure: it is
// remembered for that client only and named in the operation's error.
TEST(KafkaLogTest, RemembersEachClientsTlsFailure) {
  char err[256];
  rd_kafka_conf_t* mconf = rd_kafka_conf_new();
  rd_kafka_conf_set(mconf, "log_level", "0", err, sizeof(err));
  rd_kafka_t* mock_rk = rd_kafka_new(RD_KAFKA_PRODUCER, mconf, err, sizeof(err));
  ASSERT_NE(mock_rk, nullptr) << err;
  rd_kafka_mock_cluster_t* mock = rd_kafka_mock_cluster_new(mock_rk, 1);
  ASSERT_NE(mock, nullptr);
  const std::string bootstrap = rd_kafka_mock_cluster_bootstraps(mock);

  KafkaHandleSpec spec;
  spec.type = RD_KAFKA_PRODUCER;
  spec.what = "test";
  spec.defaults = {{"log_level", "3"}};
  spec.user = {{"bootstrap.servers", bootstrap}, {"security.protocol", "ssl"}};
  auto tls = NewKafkaHandle(spec);
  ASSERT_TRUE(tls.ok()) << tls.status().ToString();
  spec.user = {{"bootstrap.servers", bootstrap}};
  auto plain = NewKafkaHandle(spec);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();

  // The metadata request must not wait out its 60 s: librdkafka gives up on this broker
  // (transport failure), or the refusal ends the wait.
  const rd_kafka_metadata_t* md = nullptr;
  auto start = std::chrono::steady_clock::now();
  rd_kafka_resp_err_t e = WaitUnlessRefused(
      *tls, 60000, [&](int ms) { return rd_kafka_metadata(*tls, 1, nullptr, &md, ms); });
  EXPECT_TRUE(e == RD_KAFKA_RESP_ERR__AUTHENTICATION || e == RD_KAFKA_RESP_ERR__TRANSPORT)
      << rd_kafka_err2str(e);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  KafkaSecurityFailure f = KafkaSecurityFailures(*tls);
  EXPECT_GE(f.count, 1u);
  EXPECT_NE(f.last.find("SSL"), std::string::npos) << f.last;
  Status st = WithKafkaClientFailure(*tls, Status::IOError("listing topics failed"));
  EXPECT_NE(st.message().find("listing topics failed; the broker refused the client "
                              "(authentication or TLS) at kafka.bootstrap.servers '" +
                              bootstrap + "': "),
            std::string::npos)
      << st.message();
  EXPECT_TRUE(WithKafkaClientFailure(*tls, Status::OK()).ok());

  ASSERT_EQ(rd_kafka_metadata(*plain, 1, nullptr, &md, 3000), RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_metadata_destroy(md);
  EXPECT_EQ(KafkaSecurityFailures(*plain).count, 0u);
  EXPECT_EQ(WithKafkaClientFailure(*plain, Status::IOError("x")).message(), "x");

  // A flush that cannot deliver because of the TLS failure ends early, naming it.
  rd_kafka_producev(*tls, RD_KAFKA_V_TOPIC("t"), RD_KAFKA_V_VALUE(const_cast<char*>("v"), 1),
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
  start = std::chrono::steady_clock::now();
  Status flushed = FlushUnlessRefused(*tls, 60000, "kafka sink");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_NE(flushed.message().find("kafka sink: authentication or TLS failed: "), std::string::npos)
      << flushed.message();
  rd_kafka_purge(*tls, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  rd_kafka_destroy(*tls);
  rd_kafka_destroy(*plain);
  rd_kafka_mock_cluster_destroy(mock);
  rd_kafka_destroy(mock_rk);
}

// A consumer handle of `bootstrap` whose log goes through kafka_log.h.
rd_kafka_t* NewTestConsumer(const std::string& bootstrap) {
  KafkaHandleSpec spec;
  spec.type = RD_KAFKA_CONSUMER;
  spec.what = "test";
  spec.defaults = {{"log_level", "3"}, {"group.id", "test"}};
  spec.user = {{"bootstrap.servers", bootstrap}};
  auto rk = NewKafkaHandle(spec);
  EXPECT_TRUE(rk.ok()) << rk.status().ToString();
  return rk.ok() ? *rk : nullptr;
}

// Nothing listens at the bootstrap server (a mock cluster's port after the cluster is gone): the
// query ends as soon as the connection fails, not after its 120 s, naming the server and why.
TEST(KafkaLogTest, NothingListeningAtTheBootstrapServersFailsAtOnce) {
  char err[256];
  rd_kafka_conf_t* mconf = rd_kafka_conf_new();
  rd_kafka_conf_set(mconf, "log_level", "0", err, sizeof(err));
  rd_kafka_t* mock_rk = rd_kafka_new(RD_KAFKA_PRODUCER, mconf, err, sizeof(err));
  ASSERT_NE(mock_rk, nullptr) << err;
  rd_kafka_mock_cluster_t* mock = rd_kafka_mock_cluster_new(mock_rk, 1);
  ASSERT_NE(mock, nullptr);
  const std::string bootstrap = rd_kafka_mock_cluster_bootstraps(mock);
  rd_kafka_mock_cluster_destroy(mock);
  rd_kafka_destroy(mock_rk);

  rd_kafka_t* rk = NewTestConsumer(bootstrap);
  ASSERT_NE(rk, nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t e = WaitUnlessRefused(
      rk, 120000, [&](int ms) { return rd_kafka_metadata(rk, 1, nullptr, &md, ms); });
  EXPECT_EQ(e, RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) << rd_kafka_err2str(e);
  std::string why;
  EXPECT_TRUE(KafkaClusterUnreachable(rk, &why));
  Status st = WithKafkaClientFailure(rk, Status::IOError("listing topics failed"));
  EXPECT_NE(st.message().find("listing topics failed; no broker of kafka.bootstrap.servers '" +
                              bootstrap + "' could be reached: "),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("Connection refused"), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find('\n'), std::string::npos) << st.message();
  rd_kafka_destroy(rk);
}

// A client that reached the cluster once is never "unreachable": a broker that goes down later
// (restarting) is waited for by the caller; a cancelled wait ends with RD_KAFKA_RESP_ERR__INTR.
TEST(KafkaLogTest, ABrokerDownAfterTheClusterWasReachedIsWaitedForUnlessCancelled) {
  char err[256];
  rd_kafka_conf_t* mconf = rd_kafka_conf_new();
  rd_kafka_conf_set(mconf, "log_level", "0", err, sizeof(err));
  rd_kafka_t* mock_rk = rd_kafka_new(RD_KAFKA_PRODUCER, mconf, err, sizeof(err));
  ASSERT_NE(mock_rk, nullptr) << err;
  rd_kafka_mock_cluster_t* mock = rd_kafka_mock_cluster_new(mock_rk, 1);
  ASSERT_NE(mock, nullptr);
  rd_kafka_t* rk = NewTestConsumer(rd_kafka_mock_cluster_bootstraps(mock));
  ASSERT_NE(rk, nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  auto metadata = [&](int ms) {
    rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 1, nullptr, &md, ms);
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) rd_kafka_metadata_destroy(md);
    return e;
  };
  ASSERT_EQ(WaitUnlessRefused(rk, 30000, metadata), RD_KAFKA_RESP_ERR_NO_ERROR);

  rd_kafka_mock_broker_set_down(mock, 1);
  rd_kafka_resp_err_t e = WaitUnlessRefused(rk, 3000, metadata);
  EXPECT_NE(e, RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) << rd_kafka_err2str(e);
  EXPECT_NE(e, RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_FALSE(KafkaClusterUnreachable(rk, nullptr));
  e = WaitUnlessRefused(rk, 120000, metadata, [] { return true; });
  EXPECT_EQ(e, RD_KAFKA_RESP_ERR__INTR) << rd_kafka_err2str(e);

  rd_kafka_mock_broker_set_up(mock, 1);
  EXPECT_EQ(WaitUnlessRefused(rk, 30000, metadata), RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_destroy(rk);
  rd_kafka_mock_cluster_destroy(mock);
  rd_kafka_destroy(mock_rk);
}

}  // namespace
}  // namespace sluice::kafka
