// The Java Kafka client's security options, as Spark and Databricks users write them (the
// "kafka." prefix removed), translated into librdkafka's properties. NewKafkaHandle applies it to
// every user map, so the Kafka source, the sink and every other client of Sluice share it.
//
//   security.protocol         PLAINTEXT | SSL | SASL_PLAINTEXT | SASL_SSL (any case) -> same
//   sasl.mechanism(s)         GSSAPI | PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512 | OAUTHBEARER
//                             -> sasl.mechanisms; AWS_MSK_IAM refused (see below)
//   sasl.jaas.config          parsed (kafka_jaas.h); login modules, also under Databricks'
//                             shaded prefix "kafkashaded.":
//     ...plain.PlainLoginModule, ...scram.ScramLoginModule  username, password
//                             -> sasl.username, sasl.password (ScramLoginModule tokenauth=true,
//                             delegation tokens, refused)
//     ...oauthbearer.OAuthBearerLoginModule
//       without a login callback handler: the unsecured JWT ->
//         enable.sasl.oauthbearer.unsecure.jwt=true and sasl.oauthbearer.config from
//         unsecuredLoginStringClaim_<principal claim>, unsecuredLoginPrincipalClaimName,
//         unsecuredLoginListClaim_<scope claim>, unsecuredLoginScopeClaimName,
//         unsecuredLoginLifetimeSeconds, unsecuredLoginExtension_<name>; other claims refused
//       with sasl.login.callback.handler.class = ...OAuthBearerLoginCallbackHandler: OIDC ->
//         sasl.oauthbearer.method=oidc, client.id / client.secret / scope / extensions from
//         clientId, clientSecret, scope, extension_<name>; sasl.oauthbearer.token.endpoint.url
//         (the same name in both clients) required. Refused when librdkafka was built without
//         OIDC (it needs libcurl).
//     software.amazon.msk.auth.iam.IAMLoginModule (also "shadedmskiam."), AWS_MSK_IAM, the IAM
//                             callback handlers: refused, naming SCRAM or mutual TLS instead
//                             (Sluice does not sign MSK IAM tokens)
//     Krb5LoginModule         refused, naming librdkafka's sasl.kerberos.* options
//   ssl.truststore.location + .type (PEM, PKCS12; the Kafka client's default JKS reads
//                             PKCS#12 too) + .password
//                             PEM -> ssl.ca.location; PKCS#12 -> its certificates in ssl.ca.pem
//   ssl.truststore.certificates (PEM text, type PEM) -> ssl.ca.pem
//   ssl.keystore.location + .type + .password, ssl.key.password
//                             PKCS#12 -> ssl.keystore.location, ssl.keystore.password (a
//                             different ssl.key.password is refused: librdkafka decrypts the
//                             key with the store's password); PEM (key and certificate chain
//                             in one file) -> ssl.certificate.location, ssl.key.location,
//                             ssl.key.password
//   ssl.keystore.certificate.chain + ssl.keystore.key (PEM text) -> ssl.certificate.pem,
//                             ssl.key.pem (+ ssl.key.password)
//   JKS / JCEKS stores        refused with the keytool command that converts them to PKCS#12
//   ssl.endpoint.identification.algorithm  "" (no hostname verification) -> none; https
//   sasl.client.callback.handler.class, sasl.login.class, other login callback handlers: Java
//                             classes, refused
// A store's type is checked against the file's content (kafka_tls_store.h). Every other
// property passes through unchanged, so librdkafka's own names (sasl.username, ssl.ca.location,
// ...) work too; giving a Java option and the librdkafka property it becomes is refused as
// ambiguous. A Java option with the librdkafka name of another meaning never passes through.
//
// Errors: InvalidArgument "option 'kafka.<name>': ..." that never repeats a password, a JAAS
// string or a key. Pure apart from reading the store files; thread-safe.
#pragma once

#include <map>
#include <string>

#include "common/result.h"

namespace sluice::kafka {

// What the linked librdkafka can do, where the translation depends on it.
struct KafkaSecurityCapabilities {
  bool oidc = false;  // sasl.oauthbearer.method=oidc (librdkafka built with libcurl)
};
// The linked librdkafka's.
KafkaSecurityCapabilities LinkedKafkaSecurityCapabilities();

Result<std::map<std::string, std::string>> TranslateKafkaSecurityConfig(
    const std::map<std::string, std::string>& user,
    const KafkaSecurityCapabilities& caps = LinkedKafkaSecurityCapabilities());

}  // namespace sluice::kafka
