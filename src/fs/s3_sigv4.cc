#include "fs/s3_sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <map>

#include "common/strings.h"

namespace sluice::fs::sigv4 {

std::string HexEncode(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<const char*>(out), len);
}

std::string UriEncode(std::string_view s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

namespace {

// Trimmed, with runs of spaces collapsed to one (SigV4's header value rule).
std::string CanonicalHeaderValue(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::map<std::string, std::string> CanonicalHeaders(const Request& request) {
  std::map<std::string, std::string> headers;
  for (const auto& [name, value] : request.headers) {
    std::string key = AsciiLower(name);
    std::string v = CanonicalHeaderValue(value);
    auto [it, inserted] = headers.emplace(key, v);
    if (!inserted) it->second += "," + v;
  }
  return headers;
}

}  // namespace

std::string CanonicalQueryString(const std::vector<std::pair<std::string, std::string>>& query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(query.size());
  for (const auto& [k, v] : query) encoded.emplace_back(UriEncode(k, false), UriEncode(v, false));
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [k, v] : encoded) {
    if (!out.empty()) out += '&';
    out += k;
    out += '=';
    out += v;
  }
  return out;
}

std::string SignedHeaders(const Request& request) {
  std::string out;
  for (const auto& [name, value] : CanonicalHeaders(request)) {
    if (!out.empty()) out += ';';
    out += name;
  }
  return out;
}

std::string CanonicalRequest(const Request& request) {
  std::string out = request.method + "\n";
  out += request.path.empty() ? "/" : request.path;
  out += "\n" + CanonicalQueryString(request.query) + "\n";
  for (const auto& [name, value] : CanonicalHeaders(request)) out += name + ":" + value + "\n";
  out += "\n" + SignedHeaders(request) + "\n" + request.payload_hash;
  return out;
}

namespace {
std::string Scope(std::string_view amz_date, std::string_view region, std::string_view service) {
  std::string scope(amz_date.substr(0, 8));
  scope += '/';
  scope.append(region);
  scope += '/';
  scope.append(service);
  scope += "/aws4_request";
  return scope;
}
}  // namespace

std::string StringToSign(const Request& request, std::string_view amz_date, std::string_view region,
                         std::string_view service) {
  std::string out = "AWS4-HMAC-SHA256\n";
  out.append(amz_date);
  out += "\n" + Scope(amz_date, region, service) + "\n" + Sha256Hex(CanonicalRequest(request));
  return out;
}

std::string SigningKey(std::string_view secret_access_key, std::string_view date,
                       std::string_view region, std::string_view service) {
  std::string k = HmacSha256("AWS4" + std::string(secret_access_key), date);
  k = HmacSha256(k, region);
  k = HmacSha256(k, service);
  return HmacSha256(k, "aws4_request");
}

std::string Signature(const Request& request, const Credentials& credentials,
                      std::string_view amz_date, std::string_view region,
                      std::string_view service) {
  std::string key =
      SigningKey(credentials.secret_access_key, amz_date.substr(0, 8), region, service);
  return HexEncode(HmacSha256(key, StringToSign(request, amz_date, region, service)));
}

std::string AuthorizationHeader(const Request& request, const Credentials& credentials,
                                std::string_view amz_date, std::string_view region,
                                std::string_view service) {
  return "AWS4-HMAC-SHA256 Credential=" + credentials.access_key_id + "/" +
         Scope(amz_date, region, service) + ", SignedHeaders=" + SignedHeaders(request) +
         ", Signature=" + Signature(request, credentials, amz_date, region, service);
}

}  // namespace sluice::fs::sigv4
