// AWS Signature Version 4 for S3 requests (docs/s3.md): the canonical request, the string to
// sign, the signing key and the Authorization header, plus the hashing and URI-encoding helpers
// they need (SHA-256 and HMAC-SHA-256 from OpenSSL).
//
// Pure functions of their inputs (no clock, no environment); thread-safe. The secret key is only
// used to derive the signing key and never appears in any returned string.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::fs::sigv4 {

// Lower-case hex of the SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);
// Raw 32-byte HMAC-SHA-256 of `data` under `key`.
std::string HmacSha256(std::string_view key, std::string_view data);
// Lower-case hex of raw bytes.
std::string HexEncode(std::string_view bytes);
// S3's URI encoding: unreserved characters (A-Z a-z 0-9 - . _ ~) stay, every other byte is
// %XX (upper-case hex); '/' stays when `keep_slash` (object key paths) and is %2F otherwise
// (query names and values).
std::string UriEncode(std::string_view s, bool keep_slash);

struct Request {
  std::string method;  // "GET", "PUT", ...
  std::string path;    // the already-encoded absolute path, e.g. "/bucket/a%20b" or "/"
  // Query parameters, not encoded; sorted and encoded by the signer.
  std::vector<std::pair<std::string, std::string>> query;
  // Headers to sign (names in any case; values trimmed by the signer). Must include "host" and
  // "x-amz-date"; S3 also needs "x-amz-content-sha256".
  std::vector<std::pair<std::string, std::string>> headers;
  std::string payload_hash;  // hex SHA-256 of the body, or "UNSIGNED-PAYLOAD"
};

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty when none
};

// The canonical query string: names and values encoded, sorted by name then value, '&'-joined.
std::string CanonicalQueryString(const std::vector<std::pair<std::string, std::string>>& query);
// The canonical request (method, path, query, headers, signed header names, payload hash).
std::string CanonicalRequest(const Request& request);
// "host;range;x-amz-content-sha256;x-amz-date": lower-cased, sorted, ';'-joined.
std::string SignedHeaders(const Request& request);
// "AWS4-HMAC-SHA256\n<amz_date>\n<date>/<region>/<service>/aws4_request\n<hex sha256 of the
// canonical request>". `amz_date` is "YYYYMMDDTHHMMSSZ".
std::string StringToSign(const Request& request, std::string_view amz_date, std::string_view region,
                         std::string_view service);
// The raw signing key of `date` ("YYYYMMDD").
std::string SigningKey(std::string_view secret_access_key, std::string_view date,
                       std::string_view region, std::string_view service);
// Hex signature of the request.
std::string Signature(const Request& request, const Credentials& credentials,
                      std::string_view amz_date, std::string_view region, std::string_view service);
// The Authorization header's value: "AWS4-HMAC-SHA256 Credential=<id>/<scope>,
// SignedHeaders=<names>, Signature=<hex>".
std::string AuthorizationHeader(const Request& request, const Credentials& credentials,
                                std::string_view amz_date, std::string_view region,
                                std::string_view service);

}  // namespace sluice::fs::sigv4
