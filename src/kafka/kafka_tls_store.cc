#include "kafka/kafka_tls_store.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include <fstream>
#include <iterator>
#include <memory>

namespace sluice::kafka {

namespace {

Result<std::string> ReadFile(const std::string& path, const std::string& option, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::IOError("option '" + option + "': cannot open '" + path + "'");
  }
  std::string data;
  data.resize(limit);
  in.read(data.data(), static_cast<std::streamsize>(limit));
  if (in.bad()) return Status::IOError("option '" + option + "': cannot read '" + path + "'");
  data.resize(static_cast<size_t>(in.gcount()));
  return data;
}

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

}  // namespace

Result<StoreFormat> SniffStoreFormat(const std::string& path, const std::string& option) {
  SLUICE_ASSIGN_OR_RETURN(std::string head, ReadFile(path, option, 4096));
  if (head.size() >= 4) {
    auto b = [&](size_t i) { return static_cast<unsigned char>(head[i]); };
    if (b(0) == 0xFE && b(1) == 0xED && b(2) == 0xFE && b(3) == 0xED) return StoreFormat::kJks;
    if (b(0) == 0xCE && b(1) == 0xCE && b(2) == 0xCE && b(3) == 0xCE) return StoreFormat::kJceks;
    if (b(0) == 0x30) return StoreFormat::kPkcs12;
  }
  size_t first = head.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && head.compare(first, 10, "-----BEGIN") == 0) {
    return StoreFormat::kPem;
  }
  return StoreFormat::kUnknown;
}

Result<std::string> Pkcs12CertificatesAsPem(const std::string& path, const std::string& password,
                                            const std::string& option) {
  constexpr size_t kMaxStore = 16 << 20;
  SLUICE_ASSIGN_OR_RETURN(std::string der, ReadFile(path, option, kMaxStore));
  const std::string where = "option '" + option + "': the PKCS#12 store '" + path + "'";
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  std::unique_ptr<PKCS12, decltype(&PKCS12_free)> p12(
      d2i_PKCS12(nullptr, &p, static_cast<long>(der.size())), &PKCS12_free);
  if (!p12) return Status::InvalidArgument(where + " is not PKCS#12: " + OpenSslError());
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  STACK_OF(X509)* ca = nullptr;
  if (PKCS12_parse(p12.get(), password.empty() ? nullptr : password.c_str(), &key, &cert, &ca) !=
      1) {
    return Status::InvalidArgument(
        where + " cannot be read (a wrong ssl.truststore.password?): " + OpenSslError());
  }
  EVP_PKEY_free(key);
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
  int count = 0;
  bool ok = true;
  if (cert != nullptr) {
    ok = PEM_write_bio_X509(bio.get(), cert) == 1;
    ++count;
    X509_free(cert);
  }
  for (int i = 0; ca != nullptr && i < sk_X509_num(ca); ++i) {
    ok = ok && PEM_write_bio_X509(bio.get(), sk_X509_value(ca, i)) == 1;
    ++count;
  }
  sk_X509_pop_free(ca, X509_free);
  if (!ok) return Status::Internal(where + ": writing its certificates as PEM failed");
  if (count == 0) return Status::InvalidArgument(where + " holds no certificate");
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

}  // namespace sluice::kafka
