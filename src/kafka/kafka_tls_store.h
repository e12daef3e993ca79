// Java key and trust store files as the Kafka client's ssl.truststore.* / ssl.keystore.* options
// name them: which format a file holds (by its content, as Java's KeyStore does since JDK 9),
// and the certificates of a PKCS#12 trust store as PEM text, which librdkafka takes in
// ssl.ca.pem (librdkafka reads PKCS#12 only as a client keystore). Used by kafka_security_conf.
//
// Errors name the option and the file, never a password. Pure apart from reading the file;
// thread-safe.
#pragma once

#include <string>

#include "common/result.h"

namespace sluice::kafka {

enum class StoreFormat {
  kPem,     // text starting (after blanks) with "-----BEGIN"
  kPkcs12,  // DER: an ASN.1 SEQUENCE (0x30)
  kJks,     // Java's proprietary format (magic 0xFEEDFEED)
  kJceks,   // Java's JCEKS (magic 0xCECECECE)
  kUnknown,
};

// The format of the store at `path`; `option` (e.g. "kafka.ssl.truststore.location") names the
// file in the IOError when it cannot be read.
Result<StoreFormat> SniffStoreFormat(const std::string& path, const std::string& option);

// Every certificate in the PKCS#12 store at `path` (its trusted certificates and any key's
// chain), as concatenated PEM blocks. `password` may be empty (a store without integrity
// password). InvalidArgument naming `option` and the file when it cannot be read or decrypted,
// or holds no certificate.
Result<std::string> Pkcs12CertificatesAsPem(const std::string& path, const std::string& password,
                                            const std::string& option);

}  // namespace sluice::kafka
