#include "fs/s3_file_system.h"

#include <algorithm>
#include <mutex>

namespace sluice::fs {

namespace {

constexpr std::string_view kScheme = "s3://";

std::string KeyPrefixOf(const S3Path& p) { return p.key.empty() ? "" : p.key + "/"; }

Status WithOp(const Status& st, FileOp op, std::string_view path) {
  return st.WithContext(std::string(FileOpVerb(op)) + " " + std::string(path));
}

}  // namespace

Result<S3Path> ParseS3Path(std::string_view path) {
  if (path.substr(0, kScheme.size()) != kScheme) {
    return Status::InvalidArgument("'" + std::string(path) + "' is not an s3:// path");
  }
  std::string_view rest = path.substr(kScheme.size());
  size_t slash = rest.find('/');
  S3Path out;
  out.bucket = std::string(rest.substr(0, slash));
  bool valid = out.bucket.size() >= 3 && out.bucket.size() <= 63;
  for (char c : out.bucket) {
    valid = valid && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-');
  }
  if (!valid) {
    return Status::InvalidArgument("'" + std::string(path) + "': '" + out.bucket +
                                   "' is not a bucket name (3 to 63 of a-z 0-9 . -)");
  }
  if (slash != std::string_view::npos) {
    for (char c : rest.substr(slash + 1)) {
      if (c == '/' && (out.key.empty() || out.key.back() == '/')) continue;
      out.key += c;
    }
    if (!out.key.empty() && out.key.back() == '/') out.key.pop_back();
  }
  return out;
}

S3FileSystem::S3FileSystem(S3Config config) : client_(std::move(config)) {}

Status S3FileSystem::CreateIfAbsent(const std::string& path, std::string_view data,
                                    const WriteOptions& /*options*/) {
  SLUICE_ASSIGN_OR_RETURN_CTX(S3Path p, ParseS3Path(path), FileOpVerb(FileOp::kCreateIfAbsent));
  if (p.key.empty()) {
    return Status::InvalidArgument("creating " + path + ": a bucket root is not a file");
  }
  Status st = client_.PutObject(p.bucket, p.key, data, /*if_none_match=*/true);
  return st.ok() ? st : WithOp(st, FileOp::kCreateIfAbsent, path);
}

Status S3FileSystem::AtomicReplace(const std::string& path, std::string_view data,
                                   const WriteOptions& /*options*/) {
  SLUICE_ASSIGN_OR_RETURN_CTX(S3Path p, ParseS3Path(path), FileOpVerb(FileOp::kAtomicReplace));
  if (p.key.empty()) {
    return Status::InvalidArgument("replacing " + path + ": a bucket root is not a file");
  }
  Status st = client_.PutObject(p.bucket, p.key, data, /*if_none_match=*/false);
  return st.ok() ? st : WithOp(st, FileOp::kAtomicReplace, path);
}

Result<std::string> S3FileSystem::ReadFile(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN_CTX(S3Path p, ParseS3Path(path), FileOpVerb(FileOp::kReadFile));
  Result<std::string> r = client_.GetObject(p.bucket, p.key);
  if (!r.ok()) return WithOp(r.status(), FileOp::kReadFile, path);
  return r;
}

Result<std::string> S3FileSystem::ReadRange(const std::string& path, int64_t offset,
                                            int64_t length) {
  SLUICE_ASSIGN_OR_RETURN_CTX(S3Path p, ParseS3Path(path), FileOpVerb(FileOp::kReadFile));
  Result<std::string> r = client_.GetObject(p.bucket, p.key, std::pair{offset, length});
  if (!r.ok()) return WithOp(r.status(), FileOp::kReadFile, path);
  return r;
}

Result<bool> S3FileSystem::AnyKeyUnder(const std::string& bucket, const std::string& key_prefix) {
  SLUICE_ASSIGN_OR_RETURN(S3ListPage page, client_.ListObjects(bucket, key_prefix, "", "", 1));
  return !page.objects.empty() || !page.common_prefixes.empty();
}

Result<std::vector<FileInfo>> S3FileSystem::List(const std::string& dir,
                                                 std::string_view name_prefix) {
  SLUICE_ASSIGN_OR_RETURN_CTX(S3Path p, ParseS3Path(dir), FileOpVerb(FileOp::kList));
  const std::string base = KeyPrefixOf(p);
  const std::string prefix = base + std::string(name_prefix);
  std::vector<FileInfo> out;
  std::string token;
  bool any_key = false;
  do {
    Result<S3ListPage> page = client_.ListObjects(p.bucket, prefix, "/", token);
    if (!page.ok()) return WithOp(page.status(), FileOp::kList, dir);
    for (const S3ObjectInfo& o : page->objects) {
      any_key = true;
      std::string name = o.key.substr(base.size());
      if (name.empty()) continue;  // the directory's own marker
      out.push_back({JoinPath(dir, name), o.size, o.mtime_ms, false});
    }
    for (const std::string& cp : page->common_prefixes) {
      any_key = true;
      std::string name = cp.substr(base.size());
      while (!name.empty() && name.back() == '/') name.pop_back();
      if (name.empty()) continue;
      out.push_back({JoinPath(dir, name), 0, 0, true});
    }
    token = page->next_continuation_token;
  } while (!token.empty());
  if (!p.key.empty() && !any_key) {
    bool exists = false;
    if (!name_prefix.empty()) {
      Result<bool> r = AnyKeyUnder(p.bucket, base);
      if (!r.ok()) return WithOp(r.status(), FileOp::kList, dir);
      exists = *r;
    }
    if (!exists) {
      return Status::NotFound("listing " + dir + ": no such directory (no key starts with '" +
                              base + "') (bucket " + p.bucket + ")");
    }
  }
  std::sort(out.begin(), out.end(),
            [](const FileInfo& a, const FileInfo& b) { return a.path < b.path; });
  return out;
}

Result<std::vector<S3ObjectInfo>> S3FileSystem::ListAll(const S3Path& p,
                                                        const std::string& prefix) {
  std::vector<S3ObjectInfo> out;
  std::string token;
  do {
    SLUICE_ASSIGN_OR_RETURN(S3ListPage page, client_.ListObjects(p.bucket, prefix, "", token));
    for (S3ObjectInfo& o : page.objects) out.push_back(std::move(o));
    token = page.next_continuation_token;
  } while (!token.empty());
  return out;
}

Result<std::vector<FileInfo>> S3FileSystem::ListRecursive(const std::string& dir) {
  SLUICE_ASSIGN_OR_RETURN_CTX(S3Path p, ParseS3Path(dir), FileOpVerb(FileOp::kListRecursive));
  const std::string base = KeyPrefixOf(p);
  Result<std::vector<S3ObjectInfo>> all = ListAll(p, base);
  if (!all.ok()) return WithOp(all.status(), FileOp::kListRecursive, dir);
  if (all->empty() && !p.key.empty()) {
    return Status::NotFound("listing recursively " + dir +
                            ": no such directory (no key starts with '" + base + "') (bucket " +
                            p.bucket + ")");
  }
  std::vector<FileInfo> out;
  for (const S3ObjectInfo& o : *all) {
    if (o.key.back() == '/') continue;  // a directory marker
    out.push_back({JoinPath(dir, o.key.substr(base.size())), o.size, o.mtime_ms, false});
  }
  std::sort(out.begin(), out.end(),
            [](const FileInfo& a, const FileInfo& b) { return a.path < b.path; });
  return out;
}

Result<FileInfo> S3FileSystem::Stat(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN_CTX(S3Path p, ParseS3Path(path), FileOpVerb(FileOp::kStat));
  if (!p.key.empty()) {
    Result<S3ObjectInfo> head = client_.HeadObject(p.bucket, p.key);
    if (head.ok()) return FileInfo{path, head->size, head->mtime_ms, false};
    if (!head.status().IsNotFound()) return WithOp(head.status(), FileOp::kStat, path);
  }
  Result<bool> dir = AnyKeyUnder(p.bucket, KeyPrefixOf(p));
  if (!dir.ok()) return WithOp(dir.status(), FileOp::kStat, path);
  if (!*dir && !p.key.empty()) {
    return Status::NotFound("getting status of " + path + ": no such key or prefix (bucket " +
                            p.bucket + ", key " + p.key + ")");
  }
  return FileInfo{path, 0, 0, true};
}

Result<bool> S3FileSystem::Exists(const std::string& path) {
  Result<FileInfo> st = Stat(path);
  if (st.ok()) return true;
  if (st.status().IsNotFound()) {
    // A missing bucket is an error, not "absent": the path cannot be created either.
    if (st.status().message().find("NoSuchBucket") != std::string::npos) {
      return Status::NotFound("checking existence of " + path + ": " + st.status().message());
    }
    return false;
  }
  return st.status();
}

Status S3FileSystem::DeleteFile(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN_CTX(S3Path p, ParseS3Path(path), FileOpVerb(FileOp::kDeleteFile));
  if (p.key.empty()) {
    return Status::InvalidArgument("deleting " + path + ": a bucket root is not a file");
  }
  Result<S3ObjectInfo> head = client_.HeadObject(p.bucket, p.key);
  if (!head.ok()) return WithOp(head.status(), FileOp::kDeleteFile, path);
  Status st = client_.DeleteObject(p.bucket, p.key);
  return st.ok() ? st : WithOp(st, FileOp::kDeleteFile, path);
}

Status S3FileSystem::DeleteRecursive(const std::string& dir) {
  SLUICE_ASSIGN_OR_RETURN_CTX(S3Path p, ParseS3Path(dir), FileOpVerb(FileOp::kDeleteRecursive));
  std::vector<std::string> keys;
  if (!p.key.empty()) keys.push_back(p.key);  // `dir` may name a file
  Result<std::vector<S3ObjectInfo>> all = ListAll(p, KeyPrefixOf(p));
  if (!all.ok()) return WithOp(all.status(), FileOp::kDeleteRecursive, dir);
  for (const S3ObjectInfo& o : *all) keys.push_back(o.key);
  for (const std::string& key : keys) {
    Status st = client_.DeleteObject(p.bucket, key);
    if (!st.ok()) return WithOp(st, FileOp::kDeleteRecursive, dir);
  }
  return Status::OK();
}

Status S3FileSystem::CreateDirectories(const std::string& dir) {
  SLUICE_ASSIGN_OR_RETURN_CTX(S3Path p, ParseS3Path(dir), FileOpVerb(FileOp::kCreateDirectories));
  if (p.key.empty()) {
    // The bucket root: it exists when the bucket does.
    Result<bool> any = AnyKeyUnder(p.bucket, "");
    return any.ok() ? Status::OK() : WithOp(any.status(), FileOp::kCreateDirectories, dir);
  }
  Status st = client_.PutObject(p.bucket, p.key + "/", "", /*if_none_match=*/false);
  return st.ok() ? st : WithOp(st, FileOp::kCreateDirectories, dir);
}

Status S3FileSystem::RenameNoReplace(const std::string& from, const std::string& to) {
  SLUICE_ASSIGN_OR_RETURN_CTX(S3Path src, ParseS3Path(from), FileOpVerb(FileOp::kRenameNoReplace));
  SLUICE_ASSIGN_OR_RETURN_CTX(S3Path dst, ParseS3Path(to), FileOpVerb(FileOp::kRenameNoReplace));
  const std::string what = from + " to " + to;
  Result<std::string> data = client_.GetObject(src.bucket, src.key);
  if (!data.ok()) return WithOp(data.status(), FileOp::kRenameNoReplace, what);
  Status st = client_.PutObject(dst.bucket, dst.key, *data, /*if_none_match=*/true);
  if (!st.ok()) return WithOp(st, FileOp::kRenameNoReplace, what);
  st = client_.DeleteObject(src.bucket, src.key);
  return st.ok() ? st : WithOp(st, FileOp::kRenameNoReplace, what);
}

Status S3FileSystem::SetModificationTime(const std::string& path, int64_t /*mtime_ms*/) {
  return Status::NotSupported("setting modification time of " + path +
                              ": S3 sets Last-Modified itself");
}

namespace {

struct DefaultS3 {
  std::mutex mu;
  bool configured = false;
  Result<std::shared_ptr<FileSystem>> fs = Status::Internal("S3 is not configured");
};

DefaultS3& Default() {
  static DefaultS3* d = new DefaultS3();  // never destroyed: used until the process ends
  return *d;
}

Result<std::shared_ptr<FileSystem>> MakeS3(const S3Overrides& overrides) {
  S3Config::Getenv env = S3Config::ProcessEnvironment();
  if (!overrides.endpoint.empty()) {
    SLUICE_RETURN_NOT_OK(CheckS3Endpoint(overrides.endpoint, "sluice.s3.endpoint"));
  }
  // The settings take the place of the variables they override, so that every rule that follows
  // from them (path style for a custom endpoint) holds as for the variables.
  S3Config::Getenv getenv = [&](const std::string& name) -> std::optional<std::string> {
    if (name == "AWS_ENDPOINT_URL_S3" && !overrides.endpoint.empty()) return overrides.endpoint;
    if (name == "AWS_REGION" && !overrides.region.empty()) return overrides.region;
    if (name == "SLUICE_S3_PATH_STYLE" && overrides.path_style) {
      return *overrides.path_style ? "true" : "false";
    }
    return env(name);
  };
  Result<S3Config> config = S3Config::FromEnvironment(getenv);
  if (!config.ok()) return config.status().WithContext("configuring S3 from the environment");
  return std::shared_ptr<FileSystem>(std::make_shared<S3FileSystem>(std::move(*config)));
}

}  // namespace

Result<std::shared_ptr<FileSystem>> DefaultS3FileSystem() {
  DefaultS3& d = Default();
  std::lock_guard<std::mutex> lock(d.mu);
  if (!d.configured) {
    d.fs = MakeS3(S3Overrides{});
    d.configured = true;
  }
  return d.fs;
}

Status ConfigureDefaultS3FileSystem(const S3Overrides& overrides) {
  Result<std::shared_ptr<FileSystem>> fs = MakeS3(overrides);
  if (!fs.ok()) return fs.status();
  DefaultS3& d = Default();
  std::lock_guard<std::mutex> lock(d.mu);
  d.fs = std::move(fs);
  d.configured = true;
  return Status::OK();
}

}  // namespace sluice::fs
