#include "kafka/kafka_security_conf.h"

#include <librdkafka/rdkafka.h>

#include <optional>

#include "common/strings.h"
#include "kafka/kafka_jaas.h"
#include "kafka/kafka_tls_store.h"

namespace sluice::kafka {

namespace {

using Config = std::map<std::string, std::string>;

constexpr const char* kPlainModule = "org.apache.kafka.common.security.plain.PlainLoginModule";
constexpr const char* kScramModule = "org.apache.kafka.common.security.scram.ScramLoginModule";
constexpr const char* kOAuthModule =
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule";
constexpr const char* kKrb5Module = "com.sun.security.auth.module.Krb5LoginModule";
constexpr const char* kOidcHandler =
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler";
constexpr const char* kOidcHandlerOld =
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler";

const char kMskIamRefusal[] =
    "AWS MSK IAM authentication (IAMLoginModule, sasl.mechanism AWS_MSK_IAM) is not supported: "
    "librdkafka has no AWS_MSK_IAM mechanism and Sluice does not sign MSK's IAM tokens (AWS "
    "SigV4) for OAUTHBEARER. Use SASL/SCRAM instead (kafka.security.protocol=SASL_SSL, "
    "kafka.sasl.mechanism=SCRAM-SHA-512, kafka.sasl.jaas.config with ScramLoginModule; MSK keeps "
    "SCRAM users in AWS Secrets Manager) or mutual TLS (kafka.security.protocol=SSL with a "
    "PKCS#12 or PEM keystore)";

Status Bad(const std::string& option, const std::string& why) {
  return Status::InvalidArgument("option 'kafka." + option + "': " + why);
}

std::optional<std::string> Take(Config& c, const std::string& name) {
  auto it = c.find(name);
  if (it == c.end()) return std::nullopt;
  std::string v = std::move(it->second);
  c.erase(it);
  return v;
}

std::string AsciiUpper(std::string s) {
  for (char& c : s) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return s;
}

// A class name without Databricks' shading prefixes.
std::string Unshaded(const std::string& cls) {
  for (const char* prefix : {"kafkashaded.", "shadedmskiam."}) {
    std::string p = prefix;
    if (cls.rfind(p, 0) == 0) return cls.substr(p.size());
  }
  return cls;
}

bool IsMskIamClass(const std::string& cls) {
  return Unshaded(cls).rfind("software.amazon.msk.auth.iam.", 0) == 0;
}

// Sets a librdkafka property made from `from` (a Java option); refuses when the user set the
// property too.
Status SetOnce(Config& out, const std::string& key, std::string value, const std::string& from) {
  if (out.count(key)) {
    return Bad(from, "conflicts with option 'kafka." + key + "' (both set librdkafka's " + key +
                         "): give one of them");
  }
  out[key] = std::move(value);
  return Status::OK();
}

std::string ConvertCommand(const std::string& path, StoreFormat format) {
  std::string dest = path;
  size_t dot = dest.rfind('.');
  size_t slash = dest.rfind('/');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) dest.resize(dot);
  dest += ".p12";
  return std::string("`keytool -importkeystore -srckeystore ") + path +
         (format == StoreFormat::kJceks ? " -srcstoretype JCEKS" : "") + " -destkeystore " + dest +
         " -deststoretype PKCS12`";
}

// A store option's file, its declared type checked against its content. `kind` is "truststore"
// or "keystore".
Result<StoreFormat> StoreFile(const std::string& kind, const std::string& path,
                              const std::optional<std::string>& type) {
  const std::string location = "ssl." + kind + ".location";
  const std::string declared = type ? AsciiUpper(Trim(*type)) : "";
  if (!declared.empty() && declared != "PEM" && declared != "PKCS12" && declared != "JKS" &&
      declared != "JCEKS") {
    return Bad("ssl." + kind + ".type",
               "'" + *type + "' is not supported (supported: PEM, PKCS12)");
  }
  SLUICE_ASSIGN_OR_RETURN(StoreFormat format, SniffStoreFormat(path, "kafka." + location));
  switch (format) {
    case StoreFormat::kJks:
    case StoreFormat::kJceks:
      return Bad(location, std::string(format == StoreFormat::kJks ? "JKS" : "JCEKS") +
                               " keystores are not supported; convert with " +
                               ConvertCommand(path, format) + " and set kafka." + location +
                               " to the .p12 file with kafka.ssl." + kind + ".type=PKCS12");
    case StoreFormat::kPem:
      if (declared != "PEM") {
        return Bad(location, "'" + path + "' is a PEM file: set kafka.ssl." + kind + ".type=PEM" +
                                 (declared.empty() ? " (the Kafka client's default is JKS)" : ""));
      }
      return format;
    case StoreFormat::kPkcs12:
      // Java's JKS KeyStore reads PKCS#12 files too (keystore.type.compat), so JKS is accepted.
      if (declared == "PEM" || declared == "JCEKS") {
        return Bad(location, "'" + path + "' is a PKCS#12 file, not " + declared +
                                 ": set kafka.ssl." + kind + ".type=PKCS12");
      }
      return format;
    case StoreFormat::kUnknown:
      break;
  }
  return Bad(location, "'" + path + "' is neither a PEM, a PKCS#12 nor a JKS store");
}

Status TranslateTruststore(Config& in, Config& out) {
  auto location = Take(in, "ssl.truststore.location");
  auto type = Take(in, "ssl.truststore.type");
  auto password = Take(in, "ssl.truststore.password");
  auto certificates = Take(in, "ssl.truststore.certificates");
  if (certificates) {
    if (location) {
      return Bad("ssl.truststore.certificates",
                 "give either it or kafka.ssl.truststore.location, not both");
    }
    if (type && AsciiUpper(Trim(*type)) != "PEM") {
      return Bad("ssl.truststore.certificates", "needs kafka.ssl.truststore.type=PEM");
    }
    return SetOnce(out, "ssl.ca.pem", *certificates, "ssl.truststore.certificates");
  }
  if (!location) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN(StoreFormat format, StoreFile("truststore", *location, type));
  if (format == StoreFormat::kPem) {
    return SetOnce(out, "ssl.ca.location", *location, "ssl.truststore.location");
  }
  SLUICE_ASSIGN_OR_RETURN(
      std::string pem,
      Pkcs12CertificatesAsPem(*location, password.value_or(""), "kafka.ssl.truststore.location"));
  return SetOnce(out, "ssl.ca.pem", std::move(pem), "ssl.truststore.location");
}

Status TranslateKeystore(Config& in, Config& out) {
  auto location = Take(in, "ssl.keystore.location");
  auto type = Take(in, "ssl.keystore.type");
  auto password = Take(in, "ssl.keystore.password");
  auto key_password = Take(in, "ssl.key.password");
  auto chain = Take(in, "ssl.keystore.certificate.chain");
  auto key = Take(in, "ssl.keystore.key");
  if (chain || key) {
    if (!chain || !key) {
      return Bad(chain ? "ssl.keystore.certificate.chain" : "ssl.keystore.key",
                 "needs kafka.ssl.keystore.certificate.chain and kafka.ssl.keystore.key together");
    }
    if (location) {
      return Bad("ssl.keystore.key", "give either it or kafka.ssl.keystore.location, not both");
    }
    if (type && AsciiUpper(Trim(*type)) != "PEM") {
      return Bad("ssl.keystore.key", "needs kafka.ssl.keystore.type=PEM");
    }
    SLUICE_RETURN_NOT_OK(
        SetOnce(out, "ssl.certificate.pem", *chain, "ssl.keystore.certificate.chain"));
    SLUICE_RETURN_NOT_OK(SetOnce(out, "ssl.key.pem", *key, "ssl.keystore.key"));
    if (key_password) out["ssl.key.password"] = *key_password;
    return Status::OK();
  }
  if (!location) {
    // librdkafka's own ssl.key.location / ssl.key.pem take the same key password.
    if (key_password) out["ssl.key.password"] = *key_password;
    return Status::OK();
  }
  SLUICE_ASSIGN_OR_RETURN(StoreFormat format, StoreFile("keystore", *location, type));
  if (format == StoreFormat::kPem) {
    // A PEM keystore file holds the private key and the certificate chain.
    SLUICE_RETURN_NOT_OK(
        SetOnce(out, "ssl.certificate.location", *location, "ssl.keystore.location"));
    SLUICE_RETURN_NOT_OK(SetOnce(out, "ssl.key.location", *location, "ssl.keystore.location"));
    if (key_password) out["ssl.key.password"] = *key_password;
    return Status::OK();
  }
  if (password && key_password && *password != *key_password) {
    return Bad("ssl.key.password",
               "differs from kafka.ssl.keystore.password: librdkafka decrypts a PKCS#12 "
               "keystore's key with the keystore's password (export the store with one password)");
  }
  out["ssl.keystore.location"] = *location;
  if (password || key_password) out["ssl.keystore.password"] = password ? *password : *key_password;
  return Status::OK();
}

// librdkafka's sasl.oauthbearer.config is space-separated name=value pairs.
Status CheckOAuthValue(const std::string& option, const std::string& value) {
  if (value.empty() || value.find_first_of(" \t\r\n=") != std::string::npos) {
    return Bad("sasl.jaas.config", "the value of '" + option +
                                       "' is empty or holds a blank or '=', which librdkafka's "
                                       "sasl.oauthbearer.config cannot carry");
  }
  return Status::OK();
}

Status TranslateUnsecuredJwt(const JaasEntry& jaas, Config& out) {
  const auto& o = jaas.options;
  auto get = [&](const std::string& k) -> std::optional<std::string> {
    auto it = o.find(k);
    if (it == o.end()) return std::nullopt;
    return it->second;
  };
  const std::string principal_claim = get("unsecuredLoginPrincipalClaimName").value_or("sub");
  const std::string scope_claim = get("unsecuredLoginScopeClaimName").value_or("scope");
  const std::string principal_key = "unsecuredLoginStringClaim_" + principal_claim;
  auto principal = get(principal_key);
  if (!principal) {
    return Bad("sasl.jaas.config", "OAuthBearerLoginModule (the unsecured JWT) needs the option '" +
                                       principal_key + "'");
  }
  SLUICE_RETURN_NOT_OK(CheckOAuthValue("unsecuredLoginPrincipalClaimName", principal_claim));
  SLUICE_RETURN_NOT_OK(CheckOAuthValue(principal_key, *principal));
  std::string conf = "principalClaimName=" + principal_claim + " principal=" + *principal;
  std::string extensions;
  for (const auto& [k, v] : o) {
    if (k == principal_key || k == "unsecuredLoginPrincipalClaimName" ||
        k == "unsecuredLoginScopeClaimName") {
      continue;
    }
    if (k == "unsecuredLoginListClaim_" + scope_claim) {
      // The first character is the delimiter: ",read,write".
      std::string scope;
      if (v.size() > 1) {
        const char delim = v[0];
        size_t start = 1;
        for (;;) {
          size_t end = v.find(delim, start);
          std::string item = v.substr(start, end == std::string::npos ? end : end - start);
          if (!item.empty()) {
            if (item.find(',') != std::string::npos) {
              return Bad("sasl.jaas.config",
                         "a scope in '" + k + "' holds ',', which librdkafka cannot carry");
            }
            scope += (scope.empty() ? "" : ",") + item;
          }
          if (end == std::string::npos) break;
          start = end + 1;
        }
      }
      if (!scope.empty()) {
        SLUICE_RETURN_NOT_OK(CheckOAuthValue(k, scope));
        SLUICE_RETURN_NOT_OK(CheckOAuthValue("unsecuredLoginScopeClaimName", scope_claim));
        conf += " scopeClaimName=" + scope_claim + " scope=" + scope;
      }
    } else if (k == "unsecuredLoginLifetimeSeconds") {
      if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) {
        return Bad("sasl.jaas.config", "'unsecuredLoginLifetimeSeconds' is not a whole number");
      }
      conf += " lifeSeconds=" + v;
    } else if (k.rfind("unsecuredLoginExtension_", 0) == 0) {
      SLUICE_RETURN_NOT_OK(CheckOAuthValue(k, v));
      extensions += " extension_" + k.substr(24) + "=" + v;
    } else if (k.rfind("unsecuredLogin", 0) == 0) {
      return Bad("sasl.jaas.config",
                 "'" + k +
                     "' cannot be translated: librdkafka's unsecured JWT carries only the "
                     "principal, the scope, the lifetime and extensions");
    }
    // Other options are ignored, as the Kafka client ignores them.
  }
  SLUICE_RETURN_NOT_OK(
      SetOnce(out, "sasl.oauthbearer.config", conf + extensions, "sasl.jaas.config"));
  out["enable.sasl.oauthbearer.unsecure.jwt"] = "true";
  return Status::OK();
}

Status TranslateOidc(const JaasEntry& jaas, Config& out, const KafkaSecurityCapabilities& caps) {
  if (!caps.oidc) {
    return Bad("sasl.login.callback.handler.class",
               std::string("OAuth/OIDC (OAuthBearerLoginCallbackHandler) needs librdkafka built "
                           "with libcurl; the linked librdkafka ") +
                   rd_kafka_version_str() +
                   " is not. Use SASL/SCRAM or mutual TLS, or build Sluice against a librdkafka "
                   "with OIDC");
  }
  const auto& o = jaas.options;
  for (const char* required : {"clientId", "clientSecret"}) {
    if (!o.count(required)) {
      return Bad("sasl.jaas.config", std::string("OAuthBearerLoginModule with OIDC needs the "
                                                 "option '") +
                                         required + "'");
    }
  }
  if (!out.count("sasl.oauthbearer.token.endpoint.url")) {
    return Bad("sasl.login.callback.handler.class",
               "OIDC needs option 'kafka.sasl.oauthbearer.token.endpoint.url'");
  }
  SLUICE_RETURN_NOT_OK(SetOnce(out, "sasl.oauthbearer.method", "oidc", "sasl.jaas.config"));
  SLUICE_RETURN_NOT_OK(
      SetOnce(out, "sasl.oauthbearer.client.id", o.at("clientId"), "sasl.jaas.config"));
  SLUICE_RETURN_NOT_OK(
      SetOnce(out, "sasl.oauthbearer.client.secret", o.at("clientSecret"), "sasl.jaas.config"));
  if (o.count("scope")) {
    SLUICE_RETURN_NOT_OK(SetOnce(out, "sasl.oauthbearer.scope", o.at("scope"), "sasl.jaas.config"));
  }
  std::string extensions;
  for (const auto& [k, v] : o) {
    if (k.rfind("extension_", 0) != 0) continue;
    if (v.find_first_of(",=") != std::string::npos) {
      return Bad("sasl.jaas.config",
                 "the value of '" + k + "' holds ',' or '=', which librdkafka cannot carry");
    }
    extensions += (extensions.empty() ? "" : ",") + k.substr(10) + "=" + v;
  }
  if (!extensions.empty()) {
    SLUICE_RETURN_NOT_OK(
        SetOnce(out, "sasl.oauthbearer.extensions", extensions, "sasl.jaas.config"));
  }
  return Status::OK();
}

Status TranslateJaas(const std::string& text, const std::optional<std::string>& mechanism,
                     bool sasl, const std::optional<std::string>& login_handler, Config& out,
                     const KafkaSecurityCapabilities& caps) {
  SLUICE_ASSIGN_OR_RETURN(JaasEntry jaas, ParseJaasConfig(text));
  const std::string module = Unshaded(jaas.login_module);
  if (IsMskIamClass(module)) return Bad("sasl.jaas.config", kMskIamRefusal);
  if (module == kKrb5Module) {
    return Bad("sasl.jaas.config",
               "Krb5LoginModule is not translated: set librdkafka's kafka.sasl.kerberos.keytab, "
               "kafka.sasl.kerberos.principal and kafka.sasl.kerberos.service.name instead");
  }
  const std::string mech = mechanism.value_or("GSSAPI");
  const std::string mech_text =
      mechanism ? "kafka.sasl.mechanism is " + mech
                : "kafka.sasl.mechanism is not set (the Kafka client's default is GSSAPI)";
  if (module == kPlainModule || module == kScramModule) {
    const std::string short_name = module == kPlainModule ? "PlainLoginModule" : "ScramLoginModule";
    if (login_handler) {
      return Bad("sasl.login.callback.handler.class", "is not used with " + short_name);
    }
    if (sasl && mech != "PLAIN" && mech != "SCRAM-SHA-256" && mech != "SCRAM-SHA-512") {
      return Bad("sasl.jaas.config", mech_text + " but the login module is " + short_name +
                                         ": set kafka.sasl.mechanism to PLAIN, SCRAM-SHA-256 or "
                                         "SCRAM-SHA-512");
    }
    auto tokenauth = jaas.options.find("tokenauth");
    if (tokenauth != jaas.options.end() && AsciiLower(tokenauth->second) == "true") {
      return Bad("sasl.jaas.config",
                 "ScramLoginModule tokenauth=true (delegation tokens) is not supported by "
                 "librdkafka");
    }
    for (const char* required : {"username", "password"}) {
      if (!jaas.options.count(required)) {
        return Bad("sasl.jaas.config",
                   short_name + " needs the option '" + std::string(required) + "'");
      }
    }
    SLUICE_RETURN_NOT_OK(
        SetOnce(out, "sasl.username", jaas.options.at("username"), "sasl.jaas.config"));
    return SetOnce(out, "sasl.password", jaas.options.at("password"), "sasl.jaas.config");
  }
  if (module == kOAuthModule) {
    if (sasl && mech != "OAUTHBEARER") {
      return Bad("sasl.jaas.config", mech_text +
                                         " but the login module is OAuthBearerLoginModule: set "
                                         "kafka.sasl.mechanism=OAUTHBEARER");
    }
    if (!login_handler) return TranslateUnsecuredJwt(jaas, out);
    const std::string handler = Unshaded(*login_handler);
    if (handler == kOidcHandler || handler == kOidcHandlerOld) {
      return TranslateOidc(jaas, out, caps);
    }
    return Bad("sasl.login.callback.handler.class",
               "only OAuthBearerLoginCallbackHandler (OIDC) is supported: Sluice cannot load "
               "Java classes");
  }
  return Bad("sasl.jaas.config",
             "the login module '" + jaas.login_module +
                 "' is not supported (supported: PlainLoginModule, ScramLoginModule, "
                 "OAuthBearerLoginModule, also under the kafkashaded. prefix)");
}

}  // namespace

KafkaSecurityCapabilities LinkedKafkaSecurityCapabilities() {
  static const KafkaSecurityCapabilities caps = [] {
    KafkaSecurityCapabilities c;
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char err[512];
    c.oidc = rd_kafka_conf_set(conf, "sasl.oauthbearer.method", "oidc", err, sizeof(err)) ==
             RD_KAFKA_CONF_OK;
    rd_kafka_conf_destroy(conf);
    return c;
  }();
  return caps;
}

Result<std::map<std::string, std::string>> TranslateKafkaSecurityConfig(
    const std::map<std::string, std::string>& user, const KafkaSecurityCapabilities& caps) {
  Config in = user;
  auto protocol = Take(in, "security.protocol");
  auto mechanism = Take(in, "sasl.mechanism");
  auto mechanisms = Take(in, "sasl.mechanisms");  // librdkafka's name
  auto jaas = Take(in, "sasl.jaas.config");
  auto login_handler = Take(in, "sasl.login.callback.handler.class");
  auto client_handler = Take(in, "sasl.client.callback.handler.class");
  auto login_class = Take(in, "sasl.login.class");
  auto endpoint = Take(in, "ssl.endpoint.identification.algorithm");
  Config out;
  SLUICE_RETURN_NOT_OK(TranslateTruststore(in, out));
  SLUICE_RETURN_NOT_OK(TranslateKeystore(in, out));
  for (auto& [k, v] : in) {
    if (out.count(k)) {
      return Bad(k, "conflicts with the Java store options that set librdkafka's " + k +
                        ": give one of them");
    }
    out[k] = v;
  }

  std::string proto = "PLAINTEXT";
  if (protocol) {
    proto = AsciiUpper(Trim(*protocol));
    if (proto != "PLAINTEXT" && proto != "SSL" && proto != "SASL_PLAINTEXT" &&
        proto != "SASL_SSL") {
      return Bad("security.protocol", "'" + *protocol +
                                          "' is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, "
                                          "SASL_SSL");
    }
    out["security.protocol"] = proto;
  }
  const bool sasl = proto.rfind("SASL_", 0) == 0;

  if (mechanism && mechanisms) {
    return Bad("sasl.mechanisms", "give either it or kafka.sasl.mechanism, not both");
  }
  std::optional<std::string> mech;
  if (mechanism || mechanisms) {
    const std::string name = mechanism ? "sasl.mechanism" : "sasl.mechanisms";
    const std::string& raw = mechanism ? *mechanism : *mechanisms;
    mech = Trim(raw);
    if (*mech == "AWS_MSK_IAM") return Bad(name, kMskIamRefusal);
    if (*mech != "GSSAPI" && *mech != "PLAIN" && *mech != "SCRAM-SHA-256" &&
        *mech != "SCRAM-SHA-512" && *mech != "OAUTHBEARER") {
      return Bad(name, "'" + raw +
                           "' is not one of GSSAPI, PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, "
                           "OAUTHBEARER (the names are case-sensitive, as in the Kafka client)");
    }
    out["sasl.mechanisms"] = *mech;
  }

  for (const auto& [name, cls] : {std::pair{"sasl.client.callback.handler.class", client_handler},
                                  std::pair{"sasl.login.class", login_class}}) {
    if (!cls) continue;
    if (IsMskIamClass(*cls)) return Bad(name, kMskIamRefusal);
    return Bad(name, "is a Java class, which Sluice cannot load");
  }
  if (login_handler && IsMskIamClass(*login_handler)) {
    return Bad("sasl.login.callback.handler.class", kMskIamRefusal);
  }
  if (jaas) {
    SLUICE_RETURN_NOT_OK(TranslateJaas(*jaas, mech, sasl, login_handler, out, caps));
  } else if (login_handler) {
    return Bad("sasl.login.callback.handler.class",
               "needs kafka.sasl.jaas.config with OAuthBearerLoginModule");
  }
  if (sasl) {
    const std::string m = mech.value_or("GSSAPI");
    if ((m == "PLAIN" || m == "SCRAM-SHA-256" || m == "SCRAM-SHA-512") &&
        (!out.count("sasl.username") || !out.count("sasl.password"))) {
      return Bad("sasl.mechanism",
                 m + " needs credentials: kafka.sasl.jaas.config (or librdkafka's "
                     "kafka.sasl.username and kafka.sasl.password)");
    }
  }

  if (endpoint) {
    std::string v = AsciiLower(Trim(*endpoint));
    if (v.empty()) v = "none";  // the Kafka client's spelling of "no hostname verification"
    if (v != "none" && v != "https") {
      return Bad("ssl.endpoint.identification.algorithm",
                 "'" + *endpoint + "' is not supported (https, or empty for none)");
    }
    out["ssl.endpoint.identification.algorithm"] = v;
  }
  return out;
}

}  // namespace sluice::kafka
