// S3Client: S3's REST API as Sluice needs it (docs/s3.md): each request signed with SigV4,
// sent over cpp-httplib with the configured timeouts, retried with exponential backoff and full
// jitter when no reply came, on 5xx/SlowDown/RequestTimeout and, for conditional writes, on 409
// ConditionalRequestConflict. The object operations: PUT (optionally If-None-Match: *, multipart
// above the threshold), GET (whole or a byte range), HEAD, DELETE, one ListObjectsV2 page, and
// CreateBucket (tests and setup).
//
// Errors name the operation, bucket, key, HTTP status, S3 error code and message and the request
// id ("S3 PutObject: HTTP 403 AccessDenied: Access Denied (bucket b, key k, request id R)"),
// never a secret. Codes: 404 NotFound, 412 AlreadyExists (conditional create), 409 Conflict,
// 400 InvalidArgument, anything else IOError.
//
// Thread safety: safe from any number of threads; HTTP connections are pooled (one in use by one
// request at a time) and reused (keep-alive).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/status.h"
#include "fs/s3_config.h"

namespace httplib {
class Client;
}

namespace sluice::fs {

struct S3ObjectInfo {
  std::string key;
  int64_t size = 0;
  int64_t mtime_ms = 0;  // Last-Modified, ms since the epoch
};

struct S3ListPage {
  std::vector<S3ObjectInfo> objects;         // Contents
  std::vector<std::string> common_prefixes;  // CommonPrefixes/Prefix, with the delimiter
  std::string next_continuation_token;       // empty on the last page
};

class S3Client {
 public:
  explicit S3Client(S3Config config);
  ~S3Client();
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  const S3Config& config() const { return config_; }

  // PUT of `body` to bucket/key. With `if_none_match`: only when the key does not exist
  // (AlreadyExists on 412; 409 retried, Conflict when retries run out). Bodies of
  // config.multipart_threshold bytes or more go as a multipart upload (the condition on its
  // completion), aborted when any step fails.
  Status PutObject(const std::string& bucket, const std::string& key, std::string_view body,
                   bool if_none_match);
  // GET of the whole object, or of `length` bytes from `offset` (fewer at the end; an offset at
  // or past the end gives ""). NotFound when absent.
  Result<std::string> GetObject(const std::string& bucket, const std::string& key,
                                std::optional<std::pair<int64_t, int64_t>> range = std::nullopt);
  // HEAD. NotFound when absent.
  Result<S3ObjectInfo> HeadObject(const std::string& bucket, const std::string& key);
  // DELETE (OK when absent, as S3).
  Status DeleteObject(const std::string& bucket, const std::string& key);
  // One ListObjectsV2 page of keys starting with `prefix`; `delimiter` "" for all keys.
  Result<S3ListPage> ListObjects(const std::string& bucket, const std::string& prefix,
                                 const std::string& delimiter,
                                 const std::string& continuation_token, int max_keys = 1000);
  // CreateBucket in config.region (OK when this account already owns it).
  Status CreateBucket(const std::string& bucket);

  // One request and its reply. Public for the tests of odd replies; the operations above are
  // the interface.
  struct Request {
    std::string method;
    std::string operation;  // S3's name for it, for messages: "PutObject"
    std::string bucket;
    std::string key;  // "" for bucket-level requests
    std::vector<std::pair<std::string, std::string>> query;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string_view body;
    bool conditional_write = false;  // retry 409 ConditionalRequestConflict
  };
  struct Reply {
    int status = 0;
    std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
    std::string body;
    int attempts = 0;
    // An earlier attempt was sent and got no reply (or a 5xx): a write may have taken effect.
    bool ambiguous = false;
    std::string Header(std::string_view lower_name) const;
  };
  // Sends with retries. Error only when no attempt got a reply (or no credentials): "S3 <op>: no
  // reply after N attempts: <why> (bucket b, key k)".
  Result<Reply> Send(const Request& request);
  // The Status of a non-2xx reply, from its error XML (or its status when it has none).
  static Status ErrorOf(const Request& request, const Reply& reply);

 private:
  struct Pool;
  Status PutMultipart(const std::string& bucket, const std::string& key, std::string_view body,
                      bool if_none_match);
  std::string HostFor(const std::string& bucket) const;     // "host[:port]"
  std::string BaseUrlFor(const std::string& bucket) const;  // "scheme://host[:port]"
  std::string PathFor(const std::string& bucket, const std::string& key) const;

  S3Config config_;
  std::unique_ptr<Pool> pool_;
};

}  // namespace sluice::fs
