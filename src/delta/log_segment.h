// Finding the files of a Delta log: which commits and checkpoints exist, and which of them a
// snapshot at version v needs (the newest complete checkpoint <= v plus the commits after it).
//
// The listing of _delta_log is authoritative; `_last_checkpoint` is not needed (it may be
// stale, empty, corrupt or missing). Anything that is not a commit (%020d.json), a classic or
// multi-part checkpoint (%020d.checkpoint.parquet, %020d.checkpoint.%010d.%010d.parquet) or a
// UUID-named V2 checkpoint (%020d.checkpoint.<uuid>.json or .parquet, whose sidecar files in
// _delta_log/_sidecars/ checkpoint_reader.cc reads) is ignored: .crc files, .tmp/ directories,
// *.tmp files, compacted logs. Of several checkpoints of one version, a classic one is used, then
// a complete multi-part one, then the first UUID-named one by name (any of them is complete).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ids.h"
#include "common/result.h"
#include "fs/file_system.h"

namespace sluice::delta {

enum class LogFileKind { kCommit, kCheckpoint, kCheckpointPart, kCheckpointV2 };

struct LogFileName {
  LogFileKind kind = LogFileKind::kCommit;
  Version version;
  int32_t part = 0;       // kCheckpointPart: 1-based
  int32_t num_parts = 0;  // kCheckpointPart
  bool json = false;      // kCheckpointV2: a JSON top-level file (else Parquet)
};

// Classifies a file name inside _delta_log; nullopt for files a reader ignores.
std::optional<LogFileName> ParseLogFileName(std::string_view name);

// "00000000000000000042.json" for version 42.
std::string CommitFileName(Version version);
// "00000000000000000042.checkpoint.parquet".
std::string CheckpointFileName(Version version);

struct LogFile {
  fs::FileInfo info;  // full path, size, mtime
  LogFileName name;
};

struct Checkpoint {
  Version version;
  std::vector<LogFile> files;  // one classic or V2 file, or all parts in part order
};

// Everything the listing of _delta_log shows.
struct LogListing {
  std::string table_root;
  std::string log_dir;
  std::map<Version, LogFile> commits;
  // Complete checkpoints only (a multi-part checkpoint with a missing part is left out).
  std::map<Version, Checkpoint> checkpoints;
  // nullopt: the whole log was listed. Otherwise only entries with version >= listed_from were
  // listed (ListLogForLatest): good for the latest snapshot, not for time travel or history.
  std::optional<Version> listed_from;

  // The newest version that has a commit or a checkpoint; nullopt for an empty log.
  std::optional<Version> LatestVersion() const;
  // The oldest version a snapshot can be built for: 0 when commits 0..latest exist, else the
  // oldest checkpoint after which commits are contiguous up to the latest.
  std::optional<Version> EarliestRecreatableVersion() const;
};

// Lists `<table_root>/_delta_log`. NotFound ("not a Delta table") when it does not exist or
// holds no commit or checkpoint.
Result<LogListing> ListLog(fs::FileSystem* fs, const std::string& table_root);

// Lists only what the latest snapshot needs: the log entries from version `from` on, where
// `from` is `known_version` when given (a cached snapshot's version, for an incremental update)
// and otherwise the checkpoint version named by `_last_checkpoint`. The listing goes forward by
// name prefix (the ten versions around `from`, then whole hundreds) and stops after the first
// range whose last version does not exist, so opening a table with 10,000 commits stats only the
// files near its newest checkpoint. (A log with a hole of a whole range's end after `from` is
// corrupt; this listing reports the version before the hole, a full listing the hole.)
// Falls back to ListLog (a full listing, listed_from = nullopt) when there is nothing to start
// from: no known version and `_last_checkpoint` missing, empty or unparsable, the hinted
// checkpoint incomplete or gone, or no entry at or after `known_version` (a re-created table).
// `_last_checkpoint` stays a hint: a newer checkpoint after it is found by the forward listing.
Result<LogListing> ListLogForLatest(fs::FileSystem* fs, const std::string& table_root,
                                    std::optional<Version> known_version = std::nullopt);

// The version `_last_checkpoint` names, or nullopt when the file is missing, empty or not the
// JSON object Delta writes ({"version": N, ...}). Never an error: the file is only a hint.
std::optional<Version> ReadLastCheckpointHint(fs::FileSystem* fs, const std::string& log_dir);

// The files to replay for a snapshot at `version`.
struct LogSegment {
  Version version;
  std::optional<Checkpoint> checkpoint;
  std::vector<LogFile> commits;  // checkpoint.version+1 .. version (or 0 .. version)
};

// The segment for `version` (latest when nullopt). Errors: NotFound when version is beyond the
// latest or older than the earliest recreatable version ("Cannot time travel Delta table to
// version 5. Available versions: [0, 4]."); Corruption when commits are missing
// ("versions are not contiguous: [0, 2]").
Result<LogSegment> BuildLogSegment(const LogListing& listing, std::optional<Version> version);

}  // namespace sluice::delta
