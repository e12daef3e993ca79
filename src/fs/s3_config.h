// S3Config: how S3FileSystem reaches S3 (docs/s3.md "Credentials and configuration"):
// credentials, region, endpoint, addressing style, timeouts, retries and multipart sizes, and
// FromEnvironment, which finds them the way the AWS SDKs do (environment variables, the shared
// credentials and config files, profiles, AWS_ENDPOINT_URL(_S3), AWS_REGION).
//
// The secret key and session token are held here and by the signer only: ToString() and every
// error leave them out. A plain value; thread-safe as any value.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "fs/s3_sigv4.h"

namespace sluice::fs {

struct S3Config {
  sigv4::Credentials credentials;  // empty access key id: none found (requests then fail)
  std::string region = "us-east-1";
  // "scheme://host[:port]" without a trailing '/'; empty: AWS (https://s3.<region>.amazonaws.com).
  std::string endpoint;
  // Path-style URLs (http://host/bucket/key) instead of virtual-hosted (bucket.host/key).
  // FromEnvironment: on for a custom endpoint, off for AWS, SLUICE_S3_PATH_STYLE overrides.
  bool path_style = false;
  int connect_timeout_ms = 5000;   // TCP (and TLS) connect
  int request_timeout_ms = 60000;  // each read or write of a request's bytes
  int max_attempts = 6;            // in all, for a retryable failure (docs/s3.md)
  int base_backoff_ms = 50;        // attempt n sleeps U[0, min(max, base * 2^n)]
  int max_backoff_ms = 5000;
  int64_t multipart_threshold = 16 << 20;  // bodies this large or larger go as multipart
  int64_t part_size = 8 << 20;             // bytes per part (S3's minimum is 5 MiB)
  // Where credentials were looked for, for the error when none were found.
  std::vector<std::string> credential_sources;

  // "region=..., endpoint=..., path_style=..., access key id=AKIA..." (never the secret).
  std::string ToString() const;

  // Looks the variable up; std::nullopt when unset. Tests pass their own.
  using Getenv = std::function<std::optional<std::string>(const std::string& name)>;
  // The process environment.
  static Getenv ProcessEnvironment();
  // The configuration the AWS SDKs would find (docs/s3.md table). Errors: a named profile that
  // neither file has, an unreadable or malformed file (file and line named), a bad
  // SLUICE_S3_PATH_STYLE value, an endpoint that is not http(s)://host[:port].
  static Result<S3Config> FromEnvironment(const Getenv& getenv = ProcessEnvironment());
};

// OK when `endpoint` is "http(s)://host[:port]" (no path); otherwise InvalidArgument naming it and
// `from`, where it was found ("AWS_ENDPOINT_URL_S3", "sluice.s3.endpoint").
Status CheckS3Endpoint(const std::string& endpoint, const std::string& from);

}  // namespace sluice::fs
