#include "delta/snapshot.h"

#include <algorithm>
#include <type_traits>

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
  for (size_t i = 0; i < files.size(); ++i) {
    std::optional<int64_t> n = files.memo(i).Get(files[i]).num_records();
    if (!n) return std::nullopt;
    total += *n;
  }
  return total;
}

namespace {

using FileKey = LogReplay::FileKey;

template <typename T>
std::string DvId(const T& f) {
  return f.deletion_vector ? f.deletion_vector->UniqueId() : std::string();
}

// Whether file `f` orders before `key` ((path, dv id) lexicographically).
template <typename T>
bool KeyLess(const T& f, const FileKey& key) {
  int c = f.path.compare(key.first);
  if (c != 0) return c < 0;
  return DvId(f) < key.second;
}

template <typename T>
bool KeyEquals(const T& f, const FileKey& key) {
  return f.path == key.first && DvId(f) == key.second;
}

// The base's entries with every touched key's old state replaced by `pick(entry)` (none when
// it gives null), in key order. Untouched runs are copied as shared entries.
template <typename List, typename Changes, typename Pick>
typename List::Entries Merge(const typename List::Entries& base, const Changes& changes,
                             Pick pick) {
  typename List::Entries out;
  out.reserve(base.size() + changes.size());
  auto it = base.begin();
  for (const auto& [key, entry] : changes) {
    auto pos = std::lower_bound(
        it, base.end(), key,
        [](const typename List::Entry& f, const FileKey& k) { return KeyLess(f->value, k); });
    out.insert(out.end(), it, pos);
    it = pos;
    while (it != base.end() && KeyEquals((*it)->value, key)) ++it;
    if (auto p = pick(entry)) out.push_back(std::move(p));
  }
  out.insert(out.end(), it, base.end());
  return out;
}

}  // namespace

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
            FileEntry& e = files_[{a.path, DvId(a)}];
            e.live = true;
            e.add = Snapshot::FileList::MakeEntry(std::move(a));
            e.remove.reset();
          } else if constexpr (std::is_same_v<T, RemoveFile>) {
            FileEntry& e = files_[{a.path, DvId(a)}];
            e.live = false;
            e.add.reset();
            e.remove = SharedFileList<RemoveFile>::MakeEntry(std::move(a));
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
  r.base_files_ = base.files;
  r.base_tombstones_ = base.tombstones;
  r.base_schema_.emplace(base.metadata.schema_string, base.schema);
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
  if (base_schema_ && base_schema_->first == metadata_->schema_string) {
    snap.schema = base_schema_->second;  // the base's schema, already parsed and checked
  } else {
    SLUICE_ASSIGN_OR_RETURN_CTX(snap.schema, ParseSchemaString(metadata_->schema_string),
                                "schema of " + where);
  }
  for (const std::string& p : metadata_->partition_columns) {
    if (FindField(snap.schema.fields, p) == nullptr) {
      return Status::Corruption("partition column '" + p + "' is not in the schema of " + where);
    }
  }
  snap.files = Snapshot::FileList(Merge<Snapshot::FileList>(
      base_files_.entries(), files_,
      [](const FileEntry& e) { return e.live && e.add ? e.add : nullptr; }));
  snap.tombstones = SharedFileList<RemoveFile>(Merge<SharedFileList<RemoveFile>>(
      base_tombstones_.entries(), files_,
      [](const FileEntry& e) { return !(e.live && e.add) && e.remove ? e.remove : nullptr; }));
  files_.clear();
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
    SLUICE_ASSIGN_OR_RETURN(auto actions, ReadCheckpointActions(fs, conn, *segment.checkpoint));
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
