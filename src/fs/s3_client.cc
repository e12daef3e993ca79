#include "fs/s3_client.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <random>
#include <thread>

#include "common/strings.h"
#include "fs/s3_sigv4.h"
#include "fs/s3_xml.h"

namespace sluice::fs {

struct S3Client::Pool {
  std::mutex mu;
  std::map<std::string, std::vector<std::unique_ptr<httplib::Client>>> idle;
};

namespace {

std::string AmzDate() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

// "2026-01-01T10:00:00.123Z" -> ms; 0 when it does not parse.
int64_t ParseIsoTimeMs(const std::string& s) {
  std::tm tm{};
  const char* rest = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) return 0;
  int64_t ms = static_cast<int64_t>(timegm(&tm)) * 1000;
  if (*rest == '.') {
    int64_t frac = 0;
    int digits = 0;
    for (++rest; *rest >= '0' && *rest <= '9'; ++rest) {
      if (digits < 3) {
        frac = frac * 10 + (*rest - '0');
        ++digits;
      }
    }
    while (digits < 3) {
      frac *= 10;
      ++digits;
    }
    ms += frac;
  }
  return ms;
}

// "Wed, 02 Dec 2026 10:18:11 GMT" -> ms; 0 when it does not parse.
int64_t ParseHttpDateMs(const std::string& s) {
  std::tm tm{};
  if (strptime(s.c_str(), "%a, %d %b %Y %H:%M:%S", &tm) == nullptr) return 0;
  return static_cast<int64_t>(timegm(&tm)) * 1000;
}

bool RetryableStatus(int status) {
  return status == 500 || status == 502 || status == 503 || status == 504;
}

struct ErrorDoc {
  std::string code;
  std::string message;
  std::string request_id;
  bool parsed = false;
};

ErrorDoc ParseErrorDoc(const std::string& body) {
  ErrorDoc doc;
  if (body.empty()) return doc;
  Result<XmlElement> xml = ParseXml(body);
  if (!xml.ok() || xml->name != "Error") return doc;
  doc.code = xml->ChildText("Code");
  doc.message = xml->ChildText("Message");
  doc.request_id = xml->ChildText("RequestId");
  doc.parsed = true;
  return doc;
}

std::string Where(const S3Client::Request& r, const std::string& request_id = "") {
  std::string w = "(bucket " + r.bucket;
  if (!r.key.empty()) w += ", key " + r.key;
  if (!request_id.empty()) w += ", request id " + request_id;
  return w + ")";
}

int64_t Pow2Capped(int n, int64_t base, int64_t cap) {
  int64_t v = base;
  for (int i = 0; i < n && v < cap; ++i) v *= 2;
  return std::min(v, cap);
}

}  // namespace

std::string S3Client::Reply::Header(std::string_view lower_name) const {
  for (const auto& [k, v] : headers) {
    if (k == lower_name) return v;
  }
  return {};
}

S3Client::S3Client(S3Config config) : config_(std::move(config)), pool_(std::make_unique<Pool>()) {}

S3Client::~S3Client() = default;

std::string S3Client::HostFor(const std::string& bucket) const {
  std::string host;
  if (config_.endpoint.empty()) {
    host = "s3." + config_.region + ".amazonaws.com";
  } else {
    host = config_.endpoint.substr(config_.endpoint.find("://") + 3);
  }
  if (!config_.path_style && !bucket.empty()) host = bucket + "." + host;
  return host;
}

std::string S3Client::BaseUrlFor(const std::string& bucket) const {
  std::string scheme =
      config_.endpoint.empty() ? "https" : config_.endpoint.substr(0, config_.endpoint.find("://"));
  return scheme + "://" + HostFor(bucket);
}

std::string S3Client::PathFor(const std::string& bucket, const std::string& key) const {
  std::string path;
  if (config_.path_style) path = "/" + bucket;
  if (!key.empty() || !config_.path_style) path += "/" + sigv4::UriEncode(key, true);
  return path;
}

Result<S3Client::Reply> S3Client::Send(const Request& request) {
  if (config_.credentials.access_key_id.empty()) {
    std::string places;
    for (const std::string& s : config_.credential_sources) {
      places += places.empty() ? s : ", " + s;
    }
    return Status::InvalidArgument("S3 " + request.operation + ": no AWS credentials found " +
                                   Where(request) + "; looked in: " + places);
  }
  const std::string base = BaseUrlFor(request.bucket);
  const std::string host = HostFor(request.bucket);
  const std::string path = PathFor(request.bucket, request.key);
  const std::string query = sigv4::CanonicalQueryString(request.query);
  const std::string target = query.empty() ? path : path + "?" + query;
  const std::string payload_hash = sigv4::Sha256Hex(request.body);
  thread_local std::mt19937_64 rng{std::random_device{}()};

  Reply reply;
  std::string last_failure;
  for (int attempt = 0; attempt < std::max(1, config_.max_attempts); ++attempt) {
    if (attempt > 0) {
      int64_t cap = Pow2Capped(attempt - 1, config_.base_backoff_ms, config_.max_backoff_ms);
      std::uniform_int_distribution<int64_t> wait(0, cap);
      std::this_thread::sleep_for(std::chrono::milliseconds(wait(rng)));
    }
    reply.attempts = attempt + 1;
    sigv4::Request signing;
    signing.method = request.method;
    signing.path = path;
    signing.query = request.query;
    signing.headers = request.headers;
    const std::string amz_date = AmzDate();
    signing.headers.emplace_back("host", host);
    signing.headers.emplace_back("x-amz-date", amz_date);
    signing.headers.emplace_back("x-amz-content-sha256", payload_hash);
    if (!config_.credentials.session_token.empty()) {
      signing.headers.emplace_back("x-amz-security-token", config_.credentials.session_token);
    }
    signing.payload_hash = payload_hash;
    httplib::Headers headers;
    for (const auto& [k, v] : signing.headers) headers.emplace(k == "host" ? "Host" : k, v);
    headers.emplace("Authorization", sigv4::AuthorizationHeader(signing, config_.credentials,
                                                                amz_date, config_.region, "s3"));

    std::unique_ptr<httplib::Client> client;
    {
      std::lock_guard<std::mutex> lock(pool_->mu);
      auto& idle = pool_->idle[base];
      if (!idle.empty()) {
        client = std::move(idle.back());
        idle.pop_back();
      }
    }
    if (client == nullptr) {
      client = std::make_unique<httplib::Client>(base);
      client->set_url_encode(false);
      client->set_keep_alive(true);
      client->set_connection_timeout(std::chrono::milliseconds(config_.connect_timeout_ms));
      client->set_read_timeout(std::chrono::milliseconds(config_.request_timeout_ms));
      client->set_write_timeout(std::chrono::milliseconds(config_.request_timeout_ms));
    }
    httplib::Request req;
    req.method = request.method;
    req.path = target;
    req.headers = headers;
    if (!request.body.empty() || request.method == "PUT" || request.method == "POST") {
      req.body.assign(request.body);
      req.headers.emplace("Content-Type", "application/octet-stream");
    }
    httplib::Result res = client->send(req);
    if (!res) {
      last_failure = httplib::to_string(res.error());
      if (request.method != "GET" && request.method != "HEAD") reply.ambiguous = true;
      continue;  // the client is dropped: its connection is in an unknown state
    }
    reply.status = res->status;
    reply.body = std::move(res->body);
    reply.headers.clear();
    for (const auto& [k, v] : res->headers) reply.headers.emplace_back(AsciiLower(k), v);
    {
      std::lock_guard<std::mutex> lock(pool_->mu);
      pool_->idle[base].push_back(std::move(client));
    }
    bool retry = RetryableStatus(reply.status);
    if (!retry && (reply.status == 400 || reply.status == 403 || reply.status == 409)) {
      ErrorDoc doc = ParseErrorDoc(reply.body);
      retry = doc.code == "RequestTimeout" || doc.code == "RequestTimeTooSkewed" ||
              (request.conditional_write && doc.code == "ConditionalRequestConflict");
    }
    if (!retry) return reply;
    last_failure = "HTTP " + std::to_string(reply.status);
    if (RetryableStatus(reply.status) && request.method != "GET" && request.method != "HEAD") {
      reply.ambiguous = true;
    }
  }
  if (reply.status != 0) return reply;  // the last retryable reply, reported by the caller
  return Status::IOError("S3 " + request.operation + ": no reply after " +
                         std::to_string(reply.attempts) + " attempts: " + last_failure + " " +
                         Where(request));
}

Status S3Client::ErrorOf(const Request& request, const Reply& reply) {
  ErrorDoc doc = ParseErrorDoc(reply.body);
  std::string msg = "S3 " + request.operation + ": HTTP " + std::to_string(reply.status);
  std::string request_id = doc.request_id;
  if (request_id.empty()) request_id = reply.Header("x-amz-request-id");
  if (doc.parsed) {
    msg += " " + (doc.code.empty() ? std::string("(no error code)") : doc.code);
    if (!doc.message.empty()) msg += ": " + doc.message;
  } else if (reply.body.empty()) {
    msg += " (no S3 error document)";
  } else {
    msg += " (not an S3 error document: " + reply.body.substr(0, 200) + ")";
  }
  if (reply.attempts > 1) msg += " after " + std::to_string(reply.attempts) + " attempts";
  msg += " " + Where(request, request_id);
  switch (reply.status) {
    case 404:
      return Status::NotFound(std::move(msg));
    case 412:
      return Status::AlreadyExists(std::move(msg));
    case 409:
      return Status::Conflict(std::move(msg));
    case 400:
      return Status::InvalidArgument(std::move(msg));
    default:
      return Status::IOError(std::move(msg));
  }
}

namespace {
bool Ok(int status) { return status >= 200 && status < 300; }
}  // namespace

Status S3Client::PutObject(const std::string& bucket, const std::string& key, std::string_view body,
                           bool if_none_match) {
  if (static_cast<int64_t>(body.size()) >= config_.multipart_threshold) {
    return PutMultipart(bucket, key, body, if_none_match);
  }
  Request r{"PUT", "PutObject", bucket, key, {}, {}, body, if_none_match};
  if (if_none_match) r.headers.emplace_back("If-None-Match", "*");
  SLUICE_ASSIGN_OR_RETURN(Reply reply, Send(r));
  if (Ok(reply.status)) return Status::OK();
  Status st = ErrorOf(r, reply);
  if (reply.status == 412 && reply.ambiguous) {
    return st.WithContext(
        "the key exists; an earlier attempt got no reply and may have created it");
  }
  return st;
}

Status S3Client::PutMultipart(const std::string& bucket, const std::string& key,
                              std::string_view body, bool if_none_match) {
  Request init{"POST", "CreateMultipartUpload", bucket, key, {{"uploads", ""}}, {}, {}, false};
  SLUICE_ASSIGN_OR_RETURN(Reply reply, Send(init));
  if (!Ok(reply.status)) return ErrorOf(init, reply);
  SLUICE_ASSIGN_OR_RETURN_CTX(XmlElement xml, ParseXml(reply.body),
                              "S3 CreateMultipartUpload reply " + Where(init));
  std::string upload_id = xml.ChildText("UploadId");
  if (upload_id.empty()) {
    return Status::IOError("S3 CreateMultipartUpload: reply without UploadId " + Where(init));
  }
  auto abort = [&](Status st) {
    Request a{"DELETE", "AbortMultipartUpload", bucket, key, {{"uploadId", upload_id}}, {}, {},
              false};
    Result<Reply> ignored = Send(a);  // best effort; the error that made us abort is returned
    (void)ignored;
    return st;
  };
  const int64_t part_size = std::max<int64_t>(config_.part_size, 5 << 20);
  std::string complete = "<CompleteMultipartUpload>";
  int part = 0;
  for (int64_t off = 0; off < static_cast<int64_t>(body.size()); off += part_size) {
    ++part;
    std::string number = std::to_string(part);
    Request up{"PUT",
               "UploadPart",
               bucket,
               key,
               {{"partNumber", number}, {"uploadId", upload_id}},
               {},
               body.substr(static_cast<size_t>(off), static_cast<size_t>(part_size)),
               false};
    Result<Reply> r = Send(up);
    if (!r.ok()) return abort(r.status());
    if (!Ok(r->status)) return abort(ErrorOf(up, *r));
    std::string etag = r->Header("etag");
    if (etag.empty()) {
      return abort(
          Status::IOError("S3 UploadPart: reply without ETag (part " + number + ") " + Where(up)));
    }
    complete += "<Part><PartNumber>" + number + "</PartNumber><ETag>" + etag + "</ETag></Part>";
  }
  complete += "</CompleteMultipartUpload>";
  Request done{
      "POST",       "CompleteMultipartUpload", bucket, key, {{"uploadId", upload_id}}, {}, complete,
      if_none_match};
  if (if_none_match) done.headers.emplace_back("If-None-Match", "*");
  Result<Reply> r = Send(done);
  if (!r.ok()) return abort(r.status());
  // S3 may answer 200 with an error document once it has started the completion.
  if (!Ok(r->status) || ParseErrorDoc(r->body).parsed) {
    Reply shown = *r;
    if (Ok(shown.status)) shown.status = 500;
    Status st = ErrorOf(done, shown);
    if (r->status == 412 && r->ambiguous) {
      st =
          st.WithContext("the key exists; an earlier attempt got no reply and may have created it");
    }
    return abort(st);
  }
  return Status::OK();
}

Result<std::string> S3Client::GetObject(const std::string& bucket, const std::string& key,
                                        std::optional<std::pair<int64_t, int64_t>> range) {
  Request r{"GET", "GetObject", bucket, key, {}, {}, {}, false};
  if (range.has_value()) {
    if (range->first < 0 || range->second < 0) {
      return Status::InvalidArgument("S3 GetObject: negative range " + Where(r));
    }
    if (range->second == 0) return std::string();
    r.headers.emplace_back("Range", "bytes=" + std::to_string(range->first) + "-" +
                                        std::to_string(range->first + range->second - 1));
  }
  SLUICE_ASSIGN_OR_RETURN(Reply reply, Send(r));
  if (range.has_value() && reply.status == 416) return std::string();
  if (!Ok(reply.status)) return ErrorOf(r, reply);
  if (range.has_value() && reply.status == 200 &&
      static_cast<int64_t>(reply.body.size()) > range->second) {
    // A store that ignored Range: cut what was asked for.
    if (range->first >= static_cast<int64_t>(reply.body.size())) return std::string();
    return reply.body.substr(static_cast<size_t>(range->first), static_cast<size_t>(range->second));
  }
  return std::move(reply.body);
}

Result<S3ObjectInfo> S3Client::HeadObject(const std::string& bucket, const std::string& key) {
  Request r{"HEAD", "HeadObject", bucket, key, {}, {}, {}, false};
  SLUICE_ASSIGN_OR_RETURN(Reply reply, Send(r));
  if (!Ok(reply.status)) return ErrorOf(r, reply);
  S3ObjectInfo info;
  info.key = key;
  std::string length = reply.Header("content-length");
  info.size = length.empty() ? 0 : std::stoll(length);
  info.mtime_ms = ParseHttpDateMs(reply.Header("last-modified"));
  return info;
}

Status S3Client::DeleteObject(const std::string& bucket, const std::string& key) {
  Request r{"DELETE", "DeleteObject", bucket, key, {}, {}, {}, false};
  SLUICE_ASSIGN_OR_RETURN(Reply reply, Send(r));
  if (!Ok(reply.status) && reply.status != 404) return ErrorOf(r, reply);
  return Status::OK();
}

Result<S3ListPage> S3Client::ListObjects(const std::string& bucket, const std::string& prefix,
                                         const std::string& delimiter,
                                         const std::string& continuation_token, int max_keys) {
  Request r{"GET", "ListObjectsV2", bucket, "", {{"list-type", "2"}}, {}, {}, false};
  r.query.emplace_back("prefix", prefix);
  r.query.emplace_back("max-keys", std::to_string(max_keys));
  if (!delimiter.empty()) r.query.emplace_back("delimiter", delimiter);
  if (!continuation_token.empty()) r.query.emplace_back("continuation-token", continuation_token);
  SLUICE_ASSIGN_OR_RETURN(Reply reply, Send(r));
  Request shown = r;
  shown.key = prefix;
  if (!Ok(reply.status)) return ErrorOf(shown, reply);
  SLUICE_ASSIGN_OR_RETURN_CTX(XmlElement xml, ParseXml(reply.body),
                              "S3 ListObjectsV2 reply " + Where(shown));
  if (xml.name != "ListBucketResult") {
    return Status::Corruption("S3 ListObjectsV2: reply is <" + xml.name +
                              ">, not <ListBucketResult> " + Where(shown));
  }
  S3ListPage page;
  for (const XmlElement* c : xml.Children("Contents")) {
    S3ObjectInfo info;
    info.key = c->ChildText("Key");
    std::string size = c->ChildText("Size");
    char* end = nullptr;
    info.size = std::strtoll(size.c_str(), &end, 10);
    if (size.empty() || *end != '\0') {
      return Status::Corruption("S3 ListObjectsV2: bad <Size> '" + size + "' of key " + info.key +
                                " " + Where(shown));
    }
    info.mtime_ms = ParseIsoTimeMs(c->ChildText("LastModified"));
    page.objects.push_back(std::move(info));
  }
  for (const XmlElement* p : xml.Children("CommonPrefixes")) {
    page.common_prefixes.push_back(p->ChildText("Prefix"));
  }
  if (xml.ChildText("IsTruncated") == "true") {
    page.next_continuation_token = xml.ChildText("NextContinuationToken");
    if (page.next_continuation_token.empty()) {
      return Status::Corruption("S3 ListObjectsV2: truncated reply without NextContinuationToken " +
                                Where(shown));
    }
  }
  return page;
}

Status S3Client::CreateBucket(const std::string& bucket) {
  std::string body;
  if (config_.region != "us-east-1") {
    body = "<CreateBucketConfiguration><LocationConstraint>" + config_.region +
           "</LocationConstraint></CreateBucketConfiguration>";
  }
  Request r{"PUT", "CreateBucket", bucket, "", {}, {}, body, false};
  SLUICE_ASSIGN_OR_RETURN(Reply reply, Send(r));
  if (Ok(reply.status)) return Status::OK();
  if (ParseErrorDoc(reply.body).code == "BucketAlreadyOwnedByYou") return Status::OK();
  return ErrorOf(r, reply);
}

}  // namespace sluice::fs
