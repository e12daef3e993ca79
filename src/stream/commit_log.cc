#include "stream/commit_log.h"

#include <limits>

#include "stream/checkpoint_layout.h"
#include "stream/json_util.h"

namespace sluice::stream {

namespace {
using Json = nlohmann::ordered_json;
}  // namespace

std::string SerializeCommitMetadata(const CommitMetadata& metadata) {
  Json j = Json::object();
  j["nextBatchWatermarkMs"] = metadata.next_batch_watermark_ms;
  if (metadata.state_unique_ids.has_value()) {
    Json ids = Json::object();
    for (const auto& [op, partitions] : *metadata.state_unique_ids) {
      ids[std::to_string(op)] = partitions;
    }
    j["stateUniqueIds"] = std::move(ids);
  }
  return DumpJson(j);
}

Result<CommitMetadata> ParseCommitMetadata(std::string_view json) {
  return CatchJsonExceptions("commit metadata", [&]() -> Result<CommitMetadata> {
    Json j = ParseJsonNoThrow(json);
    if (j.is_discarded())
      return Status::Corruption("commit metadata is not valid JSON (torn file?)");
    if (!j.is_object()) return Status::Corruption("commit metadata is not a JSON object");
    CommitMetadata md;
    auto wm = j.find("nextBatchWatermarkMs");
    if (wm != j.end()) {
      if (!wm->is_number_integer() ||
          (wm->is_number_unsigned() &&
           wm->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))) {
        return Status::Corruption("commit metadata \"nextBatchWatermarkMs\" is not a long");
      }
      md.next_batch_watermark_ms = wm->get<int64_t>();
    }
    auto ids = j.find("stateUniqueIds");
    if (ids != j.end() && !ids->is_null()) {
      if (!ids->is_object()) return Status::Corruption("\"stateUniqueIds\" is not an object");
      md.state_unique_ids.emplace();
      for (const auto& [op, partitions] : ids->items()) {
        std::optional<BatchId> op_id = ParseBatchFileName(op);
        if (!op_id.has_value()) {
          return Status::Corruption("\"stateUniqueIds\" has a bad operator id '" + op + "'");
        }
        if (!partitions.is_array()) {
          return Status::Corruption("\"stateUniqueIds\" of operator " + op + " is not an array");
        }
        std::vector<std::vector<std::string>>& out = (*md.state_unique_ids)[op_id->value()];
        for (const Json& partition : partitions) {
          if (!partition.is_array()) {
            return Status::Corruption("\"stateUniqueIds\" of operator " + op +
                                      " holds a non-array");
          }
          std::vector<std::string>& stores = out.emplace_back();
          for (const Json& id : partition) {
            if (!id.is_string()) {
              return Status::Corruption("\"stateUniqueIds\" of operator " + op +
                                        " holds a non-string id");
            }
            stores.push_back(id.get<std::string>());
          }
        }
      }
    }
    return md;
  });
}

Result<std::string> SerializeCommit(const CommitMetadata& metadata, int version) {
  if (version < 1 || version > kMaxCommitLogVersion) {
    return Status::InvalidArgument("commit log version v" + std::to_string(version) +
                                   " cannot be written (supported: v1, v2)");
  }
  if (version == 1 && metadata.state_unique_ids.has_value()) {
    return Status::InvalidArgument("a v1 commit log entry cannot hold stateUniqueIds");
  }
  return "v" + std::to_string(version) + "\n" + SerializeCommitMetadata(metadata);
}

Result<CommitMetadata> ParseCommit(std::string_view bytes, int expected_version) {
  // JSON never holds a raw NUL byte, and the JSON parser would take one for the end of its input.
  if (const size_t nul = bytes.find('\0'); nul != std::string_view::npos) {
    return Status::Corruption("the commit log file holds a NUL byte at byte offset " +
                              std::to_string(nul) +
                              ", which no entry Spark or Sluice writes does (damaged file?)");
  }
  std::vector<std::string_view> lines = SplitLogLines(bytes);
  if (lines.empty()) {
    return Status::Corruption("incomplete log file in the commit log: the file is empty");
  }
  std::string_view version_line = lines[0];
  while (!version_line.empty() && (version_line.back() == ' ' || version_line.back() == '\t')) {
    version_line.remove_suffix(1);
  }
  while (!version_line.empty() && (version_line.front() == ' ' || version_line.front() == '\t')) {
    version_line.remove_prefix(1);
  }
  SLUICE_ASSIGN_OR_RETURN(int version, ParseLogVersion(version_line, kMaxCommitLogVersion));
  if (version != expected_version) {
    return Status::NotSupported(
        "commit log version v" + std::to_string(version) +
        " does not match the checkpoint format version v" + std::to_string(expected_version) +
        " of this query (sluice.streaming.stateStore.checkpointFormatVersion); the checkpoint "
        "format version cannot change across restarts");
  }
  if (lines.size() < 2) return CommitMetadata{};  // Spark 2.3: no metadata line, read as {}
  SLUICE_ASSIGN_OR_RETURN(CommitMetadata md, ParseCommitMetadata(lines[1]));
  if (version == 1 && md.state_unique_ids.has_value()) {
    // Neither Spark nor Sluice writes them in v1 (SerializeCommit refuses to), and a v1 query
    // does not look them up: reading on would drop what the file says.
    return Status::Corruption(
        "a v1 commit log entry holds \"stateUniqueIds\", which only v2 entries (state store "
        "checkpoint format version 2) carry: the file was damaged or not written by Spark or "
        "Sluice");
  }
  return md;
}

CommitLog::CommitLog(std::shared_ptr<fs::FileSystem> fs, const std::string& checkpoint_root)
    : CommitLog(std::move(fs), checkpoint_root, Options{}) {}

CommitLog::CommitLog(std::shared_ptr<fs::FileSystem> fs, const std::string& checkpoint_root,
                     Options options)
    : log_(std::move(fs), CommitsDir(checkpoint_root), checkpoint_root), options_(options) {}

Status CommitLog::Add(BatchId id, const CommitMetadata& metadata,
                      const fs::WriteOptions& options) const {
  SLUICE_ASSIGN_OR_RETURN_CTX(std::string bytes, SerializeCommit(metadata, options_.version),
                              "writing commit log entry " + log_.PathFor(id));
  return log_.Add(id, bytes, options);
}

Result<fs::FileSystem::PreparedFile> CommitLog::Prepare(BatchId id, const CommitMetadata& metadata,
                                                        const fs::WriteOptions& options) const {
  SLUICE_ASSIGN_OR_RETURN_CTX(std::string bytes, SerializeCommit(metadata, options_.version),
                              "writing commit log entry " + log_.PathFor(id));
  return log_.Prepare(id, bytes, options);
}

Result<CommitMetadata> CommitLog::Get(BatchId id) const {
  SLUICE_ASSIGN_OR_RETURN(std::string bytes, log_.Read(id));
  return ParseCommit(bytes, options_.version).WithContext("commit log file " + log_.PathFor(id));
}

Result<std::optional<std::pair<BatchId, CommitMetadata>>> CommitLog::Latest() const {
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchId> ids, log_.ListIds());
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
    Result<CommitMetadata> md = Get(*it);
    if (md.ok()) return std::optional<std::pair<BatchId, CommitMetadata>>(std::pair(*it, *md));
    if (!md.status().IsNotFound()) return md.status();
  }
  return std::optional<std::pair<BatchId, CommitMetadata>>();
}

}  // namespace sluice::stream
