// A snapshot: the reconciled state of a Delta table at one version (PROTOCOL.md "Action
// Reconciliation"), built from the newest checkpoint <= version plus the commits after it.
//
// Rules: latest protocol and metaData win; per appId the latest txn wins; per domain the
// latest domainMetadata wins (removed=true drops it); files are keyed by
// (path, deletionVector.uniqueId) and the newest add/remove of a key decides whether it is live
// or a tombstone (re-adding a removed path revives it); commitInfo only from the commit at the
// snapshot's version. A snapshot without protocol or metaData is Corruption; a protocol Sluice
// cannot read is NotSupported (protocol_check.h).
//
// Incremental replay: a replay that continues from a snapshot (LogReplay::FromSnapshot) keeps
// that snapshot's file lists and records only the keys the newer commits touch; Finish merges
// those into the sorted lists, sharing every untouched entry (file_list.h). A commit's cost
// then grows with the files it adds and removes, not with the table's files, and the result is
// identical to a full replay of the same commits (replay_incremental_test.cc).
//
// Parsed stats: each live file's entry keeps its add.stats parsed on first use (FileStatsMemo,
// stats_parsed.h), so data skipping parses a file's stats once for every statement on every
// snapshot that shares the entry; a file that a newer commit adds again is a new entry.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "common/result.h"
#include "delta/actions.h"
#include "delta/file_list.h"
#include "delta/log_segment.h"
#include "delta/schema.h"
#include "delta/stats_parsed.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::delta {

// Immutable after construction; share as std::shared_ptr<const Snapshot>.
struct Snapshot {
  std::string table_root;
  Version version;
  Protocol protocol;
  Metadata metadata;
  DeltaSchema schema;  // the table schema, in schemaString order (partition cols included)
  // Live files and tombstones, each sorted by (path, deletionVector unique id). Each live file
  // keeps its parsed stats: files.memo(i).Get(files[i]).
  using FileList = SharedFileList<AddFile, FileStatsMemo>;
  FileList files;
  SharedFileList<RemoveFile> tombstones;
  std::map<std::string, SetTransaction> transactions;     // by appId
  std::map<std::string, DomainMetadata> domain_metadata;  // by domain (removed ones dropped)
  std::optional<CommitInfo> commit_info;  // of the commit at `version`, when it was read
  // Commit timestamp of `version` in ms: inCommitTimestamp when in-commit timestamps are
  // enabled, else the commit file's modification time.
  int64_t timestamp_ms = 0;
  LogSegment segment;  // the files this snapshot was built from

  // The latest txn version recorded for `app_id`, or nullopt.
  std::optional<int64_t> TxnVersion(const std::string& app_id) const;
  // Total rows from stats (nullopt when any live file lacks numRecords).
  std::optional<int64_t> NumRecordsFromStats() const;
};

// Replays actions into a snapshot. Feed the checkpoint first, then commits in version order.
class LogReplay {
 public:
  // A replay that continues from `base` (its files, tombstones, txns, domains, protocol and
  // metadata), for applying newer commits incrementally. O(1) in the base's files: they are
  // shared, not copied.
  static LogReplay FromSnapshot(const Snapshot& base);

  // Applies one commit's (or a whole checkpoint's) actions, in their order in the file. Pass an
  // rvalue to move the actions in (a checkpoint's 10,000 adds are then not copied).
  void Apply(std::vector<Action> actions, Version version);
  // Validates (protocol, metadata, readable protocol, schema) and builds the snapshot. Moves the
  // file entries out: call it once, as the last use of the replay. From a base snapshot: merges
  // the touched keys into the base's sorted lists (binary search per key, untouched runs shared).
  Result<Snapshot> Finish(std::string table_root, LogSegment segment, int64_t timestamp_ms);

  // The replay key of a file: (path, deletionVector unique id or "").
  using FileKey = std::pair<std::string, std::string>;

 private:
  // The newest state of one key: live (add) or a tombstone (remove).
  struct FileEntry {
    bool live = false;
    Snapshot::FileList::Entry add;
    SharedFileList<RemoveFile>::Entry remove;
  };
  std::optional<Protocol> protocol_;
  std::optional<Metadata> metadata_;
  // Keys touched by the applied actions (all keys in a replay without a base).
  std::map<FileKey, FileEntry> files_;
  // The base snapshot's lists and schema (FromSnapshot), empty otherwise.
  Snapshot::FileList base_files_;
  SharedFileList<RemoveFile> base_tombstones_;
  std::optional<std::pair<std::string, DeltaSchema>> base_schema_;  // (schemaString, parsed)
  std::map<std::string, SetTransaction> txns_;
  std::map<std::string, DomainMetadata> domains_;
  std::optional<CommitInfo> commit_info_;
};

// Reads and parses one commit file through `fs`. Corruption names the file and line, and names
// the file when it holds no action (0 bytes or only blank lines: a damaged commit).
Result<std::vector<Action>> ReadCommitActions(fs::FileSystem* fs, const std::string& path);

// Reads the actions of a checkpoint (all parts) with the engine (checkpoint_reader.cc). add and
// remove rows are fetched in bulk (a few cells per 10,000 rows, common fields without JSON);
// other rows go through the commit-line parser, so unknown columns are ignored; stats_parsed is
// used when stats is absent. Corruption names the checkpoint file. A V2 checkpoint (a UUID-named
// JSON or Parquet file, or a classic-named one with `sidecar` rows) is its top-level actions
// (checkpointMetadata and sidecar are not kept) plus the adds and removes of every sidecar file
// it names in _delta_log/_sidecars/ (Corruption when one is missing).
Result<std::vector<Action>> ReadCheckpointActions(fs::FileSystem* fs, engine::Connection* conn,
                                                  const Checkpoint& checkpoint);

// The snapshot at `version` > base.version, built by applying commits base.version+1..version
// to `base` (no checkpoint read). Corruption when a commit in between is missing.
Result<std::shared_ptr<const Snapshot>> UpdateSnapshot(fs::FileSystem* fs,
                                                       const LogListing& listing,
                                                       const Snapshot& base, Version version);

// Loads the snapshot described by `segment`.
Result<std::shared_ptr<const Snapshot>> LoadSnapshot(fs::FileSystem* fs, engine::Connection* conn,
                                                     const LogListing& listing,
                                                     const LogSegment& segment);

}  // namespace sluice::delta
