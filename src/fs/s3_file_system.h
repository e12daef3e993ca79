// S3FileSystem: the FileSystem contract (file_system.h, docs/fs.md) over S3 (docs/s3.md has the
// mapping of every operation and what differs from a local disk).
//
// - Paths are "s3://bucket/key"; keys have no leading '/', runs of '/' collapse and a trailing
//   '/' is dropped. "s3://bucket" is the bucket's root directory.
// - CreateIfAbsent is a PUT with If-None-Match: *: S3 decides races between threads and processes,
//   exactly one creator wins, the others get AlreadyExists; 409 ConditionalRequestConflict is
//   retried. Large bodies go as a multipart upload with the condition on its completion.
// - AtomicReplace is a plain PUT (atomic for readers). Neither writes temporary objects.
// - Directories are prefixes: a key "d/f" makes "d" a directory; CreateDirectories writes an
//   empty marker object "d/" so that an empty directory exists. Listings skip markers.
// - RenameNoReplace is copy (conditional PUT) + delete: NOT atomic (a reader may see both names,
//   a crash may leave both). SetModificationTime is NotSupported. SyncFile/SyncDirectory are OK.
// - Errors: "<verb> s3://b/k: S3 <operation>: HTTP <status> <code>: <message> (bucket b, key k,
//   request id R)", with FileSystem's codes (NotFound, AlreadyExists, ...).
//
// Thread safety: safe from any number of threads and processes (S3Client pools connections).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fs/file_system.h"
#include "fs/s3_client.h"

namespace sluice::fs {

struct S3Path {
  std::string bucket;
  std::string key;  // "" for the bucket root
};

// Splits "s3://bucket/key". InvalidArgument naming the path when it is not s3://, the bucket is
// empty or is not a valid bucket name (3-63 of a-z 0-9 . -).
Result<S3Path> ParseS3Path(std::string_view path);

class S3FileSystem final : public FileSystem {
 public:
  explicit S3FileSystem(S3Config config);

  S3Client& client() { return client_; }

  Status CreateIfAbsent(const std::string& path, std::string_view data,
                        const WriteOptions& options = {}) override;
  Status AtomicReplace(const std::string& path, std::string_view data,
                       const WriteOptions& options = {}) override;
  Result<std::string> ReadFile(const std::string& path) override;
  // `length` bytes from `offset` (fewer at the end of the object). NotFound when absent.
  Result<std::string> ReadRange(const std::string& path, int64_t offset, int64_t length);
  Result<std::vector<FileInfo>> List(const std::string& dir,
                                     std::string_view name_prefix = "") override;
  Result<std::vector<FileInfo>> ListRecursive(const std::string& dir) override;
  Result<FileInfo> Stat(const std::string& path) override;
  Result<bool> Exists(const std::string& path) override;
  Status DeleteFile(const std::string& path) override;
  Status DeleteRecursive(const std::string& dir) override;
  Status CreateDirectories(const std::string& dir) override;
  Status RenameNoReplace(const std::string& from, const std::string& to) override;
  Status SetModificationTime(const std::string& path, int64_t mtime_ms) override;

 private:
  // Every key under `prefix` (markers included), all pages.
  Result<std::vector<S3ObjectInfo>> ListAll(const S3Path& p, const std::string& prefix);
  // True when any key starts with `key_prefix` (one key asked for).
  Result<bool> AnyKeyUnder(const std::string& bucket, const std::string& key_prefix);

  S3Client client_;
};

// The process-wide S3FileSystem, configured by S3Config::FromEnvironment() on first use (an
// error then is returned by this and every later call until ConfigureDefaultS3FileSystem).
// Thread-safe.
Result<std::shared_ptr<FileSystem>> DefaultS3FileSystem();

// The engine settings sluice.s3.endpoint, sluice.s3.region and sluice.s3.pathStyle: each, when
// set, takes the place of AWS_ENDPOINT_URL_S3, AWS_REGION and SLUICE_S3_PATH_STYLE (docs/s3.md).
struct S3Overrides {
  std::string endpoint;            // "" : from the environment
  std::string region;              // "" : from the environment
  std::optional<bool> path_style;  // nullopt: from the environment (on for a custom endpoint)
};
// Replaces the process-wide S3FileSystem by one configured from the environment with `overrides`
// applied; file systems handed out before keep their configuration. On error (a bad endpoint,
// named with the setting) the current one stays. Thread-safe.
Status ConfigureDefaultS3FileSystem(const S3Overrides& overrides);

}  // namespace sluice::fs
