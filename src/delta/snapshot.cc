#include "delta/snapshot.h"

#include <algorithm>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "delta/protocol_check.h"
#include "delta/values.h"

namespace sluice::delta {

std::optional<int64_t> Snapshot::TxnVersion(const std::string& app_id) const {
  auto it = transactions.find(app_id);
  if (it == transactions.end()) return std::nullopt;
  return it->second.version;
}

std::optional<int64_t> Snapshot::NumRecordsFromStats() const {
  int64_t total = 0;
  for (const AddFile& f : files) {
    if (!f.stats) return std::nullopt;
    nlohmann::json j = nlohmann::json::parse(*f.stats, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("numRecords") ||
        !j["numRecords"].is_number()) {
      return std::nullopt;
    }
    total += j["numRecords"].get<int64_t>();
  }
  return total;
}

void LogReplay::Apply(std::vector<Action> actions, Version /*version*/) {
  commit_info_.reset();
  for (Action& action : actions) {
    std::visit(
        [&](auto& a) {
          using T = std::decay_t<decltype(a)>;
          if constexpr (std::is_same_v<T, Protocol>) {
            protocol_ = a;
          } else if constexpr (std::is_same_v<T, Metadata>) {
            metadata_ = a;
          } else if constexpr (std::is_same_v<T, AddFile>) {
            FileEntry& e = files_[{a.path, a.deletion_vector ? a.deletion_vector->UniqueId() : ""}];
            e.live = true;
            e.add = std::move(a);
            e.remove.reset();
          } else if constexpr (std::is_same_v<T, RemoveFile>) {
            FileEntry& e = files_[{a.path, a.deletion_vector ? a.deletion_vector->UniqueId() : ""}];
            e.live = false;
            e.add.reset();
            e.remove = std::move(a);
          } else if constexpr (std::is_same_v<T, SetTransaction>) {
            txns_[a.app_id] = a;
          } else if constexpr (std::is_same_v<T, DomainMetadata>) {
            if (a.removed) {
              domains_.erase(a.domain);
            } else {
              domains_[a.domain] = a;
            }
          } else if constexpr (std::is_same_v<T, CommitInfo>) {
            commit_info_ = a;
          }
          // cdc actions do not change the snapshot.
        },
        action);
  }
}

LogReplay LogReplay::FromSnapshot(const Snapshot& base) {
  LogReplay r;
  r.protocol_ = base.protocol;
  r.metadata_ = base.metadata;
  for (const AddFile& a : base.files) {
    FileEntry& e = r.files_[{a.path, a.deletion_vector ? a.deletion_vector->UniqueId() : ""}];
    e.live = true;
    e.add = a;
  }
  for (const RemoveFile& rm : base.tombstones) {
    FileEntry& e = r.files_[{rm.path, rm.deletion_vector ? rm.deletion_vector->UniqueId() : ""}];
    e.remove = rm;
  }
  r.txns_ = base.transactions;
  r.domains_ = base.domain_metadata;
  r.commit_info_ = base.commit_info;
  return r;
}

Result<Snapshot> LogReplay::Finish(std::string table_root, LogSegment segment,
                                   int64_t timestamp_ms) {
  std::string where = table_root + " at version " + segment.version.ToString();
  if (!protocol_) return Status::Corruption("No protocol found in the Delta log of " + where);
  if (!metadata_) return Status::Corruption("No metadata found in the Delta log of " + where);
  SLUICE_RETURN_NOT_OK_CTX(CheckReadSupported(*protocol_, *metadata_), where);
  Snapshot snap;
  snap.table_root = std::move(table_root);
  snap.version = segment.version;
  snap.protocol = *protocol_;
  snap.metadata = *metadata_;
  if (metadata_->schema_string.empty()) {
    return Status::Corruption("metaData has no schemaString in the Delta log of " + where);
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(snap.schema, ParseSchemaString(metadata_->schema_string),
                              "schema of " + where);
  for (const std::string& p : metadata_->partition_columns) {
    if (FindField(snap.schema.fields, p) == nullptr) {
      return Status::Corruption("partition column '" + p + "' is not in the schema of " + where);
    }
  }
  size_t live = 0;
  for (auto& [key, entry] : files_) live += entry.live && entry.add ? 1 : 0;
  snap.files.reserve(live);
  snap.tombstones.reserve(files_.size() - live);
  for (auto& [key, entry] : files_) {
    if (entry.live && entry.add) {
      if (entry.add->deletion_vector) {
        return Status::NotSupported("Unsupported Delta reader feature 'deletionVectors': file " +
                                    entry.add->path + " has a deletion vector (" + where + ")");
      }
      snap.files.push_back(std::move(*entry.add));
    } else if (entry.remove) {
      snap.tombstones.push_back(std::move(*entry.remove));
    }
  }
  files_.clear();
  auto by_path = [](const auto& a, const auto& b) { return a.path < b.path; };
  std::stable_sort(snap.files.begin(), snap.files.end(), by_path);
  std::stable_sort(snap.tombstones.begin(), snap.tombstones.end(), by_path);
  snap.transactions = txns_;
  snap.domain_metadata = domains_;
  snap.commit_info = commit_info_;
  snap.timestamp_ms = timestamp_ms;
  snap.segment = std::move(segment);
  return snap;
}

Result<std::vector<Action>> ReadCommitActions(fs::FileSystem* fs, const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN_CTX(std::string contents, fs->ReadFile(path), "reading " + path);
  SLUICE_ASSIGN_OR_RETURN(auto actions, ParseCommitFile(contents, path));
  // A commit is published atomically and holds at least one action (Sluice and Spark write a
  // commitInfo in every commit), so a commit without one is a damaged file.
  if (actions.empty()) {
    return Status::Corruption("Delta commit file " + path + " holds no action (" +
                              std::to_string(contents.size()) +
                              " bytes): the file is damaged; restore it from a copy of the table");
  }
  return actions;
}

namespace {
int64_t CommitTime(const LogListing& listing, const LogSegment& segment) {
  auto c = listing.commits.find(segment.version);
  if (c != listing.commits.end()) return c->second.info.mtime_ms;
  if (segment.checkpoint) return segment.checkpoint->files.front().info.mtime_ms;
  return 0;
}

std::shared_ptr<const Snapshot> Finalize(Snapshot snap) {
  if (snap.metadata.ConfigIsTrue("delta.enableInCommitTimestamps") && snap.commit_info &&
      snap.commit_info->in_commit_timestamp) {
    snap.timestamp_ms = *snap.commit_info->in_commit_timestamp;
  }
  return std::make_shared<Snapshot>(std::move(snap));
}
}  // namespace

Result<std::shared_ptr<const Snapshot>> UpdateSnapshot(fs::FileSystem* fs,
                                                       const LogListing& listing,
                                                       const Snapshot& base, Version version) {
  if (version <= base.version) return Status::Internal("UpdateSnapshot needs a newer version");
  LogReplay replay = LogReplay::FromSnapshot(base);
  LogSegment segment = base.segment;
  segment.version = version;
  for (Version v = base.version.Next(); v <= version; ++v) {
    auto c = listing.commits.find(v);
    if (c == listing.commits.end()) {
      return Status::Corruption("versions are not contiguous: commit " + v.ToString() +
                                " is missing in " + listing.log_dir);
    }
    SLUICE_ASSIGN_OR_RETURN(auto actions, ReadCommitActions(fs, c->second.info.path));
    replay.Apply(std::move(actions), v);
    segment.commits.push_back(c->second);
  }
  int64_t ts = CommitTime(listing, segment);
  SLUICE_ASSIGN_OR_RETURN(Snapshot snap, replay.Finish(listing.table_root, std::move(segment), ts));
  return Finalize(std::move(snap));
}

Result<std::shared_ptr<const Snapshot>> LoadSnapshot(fs::FileSystem* fs, engine::Connection* conn,
                                                     const LogListing& listing,
                                                     const LogSegment& segment) {
  LogReplay replay;
  if (segment.checkpoint) {
    SLUICE_ASSIGN_OR_RETURN(auto actions, ReadCheckpointActions(conn, *segment.checkpoint));
    replay.Apply(std::move(actions), segment.checkpoint->version);
  }
  for (const LogFile& commit : segment.commits) {
    SLUICE_ASSIGN_OR_RETURN(auto actions, ReadCommitActions(fs, commit.info.path));
    replay.Apply(std::move(actions), commit.name.version);
  }
  // Timestamp: file mtime of the commit at `version` (or the checkpoint when the commit is gone),
  // or the in-commit timestamp when enabled.
  SLUICE_ASSIGN_OR_RETURN(Snapshot snap,
                          replay.Finish(listing.table_root, segment, CommitTime(listing, segment)));
  return Finalize(std::move(snap));
}

}  // namespace sluice::delta
