#include "stream/batch_log.h"

#include <algorithm>
#include <limits>

namespace sluice::stream {

std::optional<BatchId> ParseBatchFileName(std::string_view name) {
  if (name.empty() || name.size() > 19) return std::nullopt;  // int64 max has 19 digits
  if (name.size() > 1 && name[0] == '0') return std::nullopt;
  uint64_t v = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return BatchId(static_cast<int64_t>(v));
}

std::optional<BatchId> PurgeThreshold(BatchId current, int64_t min_batches_to_retain) {
  if (min_batches_to_retain < current.value()) {
    return BatchId(current.value() - min_batches_to_retain);
  }
  return std::nullopt;
}

Result<int> ParseLogVersion(std::string_view line, int max_supported_version) {
  auto malformed = [&] {
    return Status::Corruption("log file is malformed: failed to read the log version from '" +
                              std::string(line.substr(0, 40)) + "'");
  };
  if (line.size() < 2 || line[0] != 'v' || line.size() > 10) return malformed();
  int64_t version = 0;
  for (char c : line.substr(1)) {
    if (c < '0' || c > '9') return malformed();
    version = version * 10 + (c - '0');
  }
  if (version <= 0) return malformed();
  if (version > max_supported_version) {
    return Status::NotSupported(
        "unsupported log version: the maximum supported log version is v" +
        std::to_string(max_supported_version) + ", but encountered v" + std::to_string(version) +
        "; the file was written by a newer version of the engine and cannot be read by this "
        "version: upgrade Sluice");
  }
  return static_cast<int>(version);
}

std::vector<std::string_view> SplitLogLines(std::string_view bytes) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < bytes.size()) {
    size_t nl = bytes.find('\n', pos);
    size_t end = nl == std::string_view::npos ? bytes.size() : nl;
    std::string_view line = bytes.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return lines;
}

BatchLog::BatchLog(std::shared_ptr<fs::FileSystem> fs, std::string dir, std::string checkpoint_root)
    : fs_(std::move(fs)), dir_(std::move(dir)), checkpoint_root_(std::move(checkpoint_root)) {}

std::string BatchLog::PathFor(BatchId id) const { return fs::JoinPath(dir_, id.ToString()); }

Status BatchLog::Add(BatchId id, std::string_view bytes, const fs::WriteOptions& options) const {
  if (id.value() < 0) {
    return Status::InvalidArgument("negative batch id " + id.ToString() + " for log " + dir_);
  }
  return ConflictIfExists(id, fs_->CreateIfAbsent(PathFor(id), bytes, options));
}

Status BatchLog::ConflictIfExists(BatchId id, Status st) const {
  if (st.IsAlreadyExists()) {
    return Status::Conflict("cannot write " + PathFor(id) + ": batch " + id.ToString() +
                            " already exists; another query is using the checkpoint " +
                            checkpoint_root_ +
                            " concurrently (two queries must never share a checkpoint location)");
  }
  return st;
}

Result<fs::FileSystem::PreparedFile> BatchLog::Prepare(BatchId id, std::string_view bytes,
                                                       const fs::WriteOptions& options) const {
  if (id.value() < 0) {
    return Status::InvalidArgument("negative batch id " + id.ToString() + " for log " + dir_);
  }
  auto prepared = fs_->PrepareCreate(PathFor(id), bytes, options);
  if (!prepared.ok()) return ConflictIfExists(id, prepared.status());
  return prepared;
}

Status BatchLog::Publish(BatchId id, const fs::FileSystem::PreparedFile& file,
                         const fs::WriteOptions& options) const {
  return ConflictIfExists(id, fs_->PublishCreate(file, options));
}

Result<std::string> BatchLog::Read(BatchId id) const { return fs_->ReadFile(PathFor(id)); }

Result<std::vector<BatchId>> BatchLog::ListIds() const {
  Result<std::vector<fs::FileInfo>> listed = fs_->List(dir_);
  if (!listed.ok()) {
    if (listed.status().IsNotFound()) return std::vector<BatchId>{};
    return listed.status();
  }
  std::vector<BatchId> ids;
  for (const fs::FileInfo& info : *listed) {
    if (info.is_directory) continue;
    std::optional<BatchId> id = ParseBatchFileName(fs::BaseName(info.path));
    if (id.has_value()) ids.push_back(*id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

Result<int64_t> BatchLog::Purge(BatchId threshold) const {
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchId> ids, ListIds());
  int64_t deleted = 0;
  for (BatchId id : ids) {
    if (id >= threshold) break;
    Status st = fs_->DeleteFile(PathFor(id));
    if (st.ok()) {
      ++deleted;
    } else if (!st.IsNotFound()) {
      return st.WithContext("purging log " + dir_);
    }
  }
  return deleted;
}

Result<int64_t> BatchLog::PurgeRange(BatchId from, BatchId threshold) const {
  int64_t deleted = 0;
  for (int64_t id = std::max<int64_t>(from.value(), 0); id < threshold.value(); ++id) {
    Status st = fs_->DeleteFile(PathFor(BatchId(id)));
    if (st.ok()) {
      ++deleted;
    } else if (!st.IsNotFound()) {
      return st.WithContext("purging log " + dir_);
    }
  }
  return deleted;
}

}  // namespace sluice::stream
