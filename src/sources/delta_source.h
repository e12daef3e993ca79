// DeltaSource: `FROM STREAM t`, the new commits of a Delta table (Spark's DeltaSource).
//
// Where it starts (first LatestOffset of a fresh checkpoint; the choice is persisted in
// <checkpoint_dir>/delta_start so that a re-run of batch 0 after a crash reads the same files):
// - no option: the snapshot at the latest version V (all its files, sorted by modificationTime
//   then path; offsets have isStartingVersion=true), then the commits after V;
// - startingVersion = N: the commits N, N+1, ... (no snapshot); "latest": the commits after the
//   latest version;
// - startingTimestamp = T: the commits from the first commit with timestamp >= T (the commit
//   after the latest when T is later than every commit).
//
// Per commit: the add actions with dataChange=true, in commit-file order. A commit with no add
// and no dataChange=false file action (an INSERT of zero rows, a metadata-only commit) still
// moves the offset, so the query runs a batch of zero rows for it. A commit whose file actions
// all have dataChange=false (OPTIMIZE) is skipped. A commit with a remove with dataChange=true
// (UPDATE, DELETE, MERGE, OVERWRITE) stops the stream with Spark's "Detected a data update"
// error, unless skipChangeCommits=true, which skips the whole commit.
//
// Schema: the latest table schema when the source is created. A later commit whose schema
// differs stops the stream (InvalidArgument naming both schemas). On restart the new source
// takes the then-latest schema; commits before that version are accepted when their schema is
// read-compatible (every column present with the same type), so an additive change continues
// after a restart (older files read the new columns as NULL). Other changes keep failing:
// a new checkpoint is needed. Column mapping (name/id): files are read by physical names; a
// RENAME or DROP COLUMN between the stream's schema and a commit's stops the stream with
// Delta's DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG error.
//
// Schema log (option schemaTrackingLocation, delta_schema_log.h; docs/delta.md "Streaming
// across RENAME / DROP COLUMN"): the stream's schema is the newest entry's (a new log gets
// entry 0, the schema at the version the stream starts from). A later commit that changes the
// schema ends the stream before it: LatestOffset returns the barrier offset (V, -20) (a batch
// of no rows) and its Commit appends V's schema as the next entry, then fails with Delta's
// DELTA_STREAMING_METADATA_EVOLUTION ("please restart"). When the source opens, consecutive
// schema changes with no data between are merged into one entry (previousMetadataSeqNum), as
// Delta does; then a RENAME or DROP between the newest entry and the one before it continues
// only when unblocked by the reader options allowSourceColumnRename / allowSourceColumnDrop
// ("always", or the newest entry's version), else it fails with Delta's
// DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION naming them. Spark's SQL
// confs spark.databricks.delta.streaming.allowSourceColumn* do not reach the source yet.
//
// Rate limits: ReadLimit fields when set, else the options maxFilesPerTrigger (default 1000
// when maxBytesPerTrigger is not set either) and maxBytesPerTrigger (soft: at least one file).
// all_available ignores both.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "delta/actions.h"
#include "delta/schema.h"
#include "delta/table.h"
#include "sources/delta_schema_log.h"
#include "sources/delta_source_offset.h"
#include "sources/source.h"

namespace sluice::sources {

struct DeltaSourceOptions {
  std::string path;                             // table root
  std::optional<std::string> starting_version;  // "latest" or a version number
  std::optional<int64_t> starting_timestamp_ms;
  std::optional<int64_t> max_files_per_trigger;  // default 1000 when neither limit is set
  std::optional<int64_t> max_bytes_per_trigger;
  bool skip_change_commits = false;
  // The schema log's directory: relative to the query's checkpoint, or an absolute path under
  // it (Delta's rule). Unset: no schema log.
  std::optional<std::string> schema_tracking_location;
  std::optional<std::string> allow_source_column_rename;  // "always" or a table version
  std::optional<std::string> allow_source_column_drop;
};

inline constexpr int64_t kDefaultMaxFilesPerTrigger = 1000;

// In the message of a schema-change error when the change only adds columns (the stream's
// columns all remain with their types): a restart continues with the new schema. Other schema
// changes say "(not additive)" and need a new checkpoint. `sluice run` restarts on the former.
inline constexpr char kAdditiveSchemaChangeTag[] = "(additive: columns added)";

// The persisted starting point (<checkpoint_dir>/delta_start, "v1\n{json}").
inline constexpr char kDeltaStartFile[] = "delta_start";
struct DeltaStart {
  std::string reservoir_id;
  int64_t version = 0;
  bool snapshot = false;  // read the snapshot at `version` first
};

class DeltaSource final : public Source {
 public:
  // Opens the table (NotFound when it is not a Delta table) and takes its latest schema.
  static Result<std::unique_ptr<DeltaSource>> Open(const SourceContext& ctx,
                                                   DeltaSourceOptions options);

  std::string Description() const override { return DescriptionOf(options_.path); }
  // The Description() of a source of the table at `path`, without opening it.
  static std::string DescriptionOf(const std::string& path) { return "DeltaSource[" + path + "]"; }
  const engine::Schema& schema() const override { return schema_; }
  Result<std::optional<OffsetJson>> LatestOffset(const std::optional<OffsetJson>& start,
                                                 const ReadLimit& limit) override;
  Status PrepareForAvailableNow() override;
  Result<engine::Batch> GetBatch(const std::optional<OffsetJson>& start,
                                 const OffsetJson& end) override;
  Status Commit(const OffsetJson& end) override;
  // numFilesOutstanding / numBytesOutstanding after the last offset LatestOffset returned.
  std::map<std::string, std::string> Metrics(
      const std::optional<OffsetJson>& latest) const override;

  const std::string& reservoir_id() const { return reservoir_id_; }

 private:
  // How one commit contributes to the stream.
  struct VersionChanges {
    std::vector<delta::AddFile> files;  // dataChange adds, in order
    bool skipped = false;               // OPTIMIZE-like or skipped change commit
    Status error;                       // data update / schema change: stops the stream here
    // With a schema log: the commit changes the stream's schema; the stream stops before it
    // and records this entry (index not yet known).
    std::shared_ptr<const SchemaLogEntry> metadata_change;
  };
  // The next unread position.
  struct Cursor {
    int64_t version = 0;
    int64_t next_index = 0;
    bool snapshot = false;    // inside the starting snapshot of `version`
    bool delivered = false;   // an offset naming `version` was already returned
    bool at_barrier = false;  // at the metadata-change barrier of `version` (index -20)
  };
  struct Limits {
    std::optional<int64_t> max_files;
    std::optional<int64_t> max_bytes;
  };

  DeltaSource(const SourceContext& ctx, DeltaSourceOptions options);

  Result<DeltaStart> LoadOrCreateStart();
  Result<Cursor> CursorAfter(const std::optional<OffsetJson>& start);
  Result<DeltaSourceOffset> ParseChecked(const OffsetJson& json) const;
  Result<std::shared_ptr<const VersionChanges>> Changes(int64_t version);
  Result<std::shared_ptr<const std::vector<delta::AddFile>>> SnapshotFiles(int64_t version);
  Result<int64_t> LatestVersion();
  // Delta's error for a rename or drop (column mapping) between the stream's schema and the
  // schema at `version`.
  Status IncompatibleSchemaChange(const engine::Schema& data_schema, int64_t version,
                                  const std::string& change) const;
  Limits EffectiveLimits(const ReadLimit& limit) const;

  // Schema log (the option schemaTrackingLocation): opens the log, takes its newest entry as
  // the stream's schema (writing entry 0 for a new log), merges consecutive schema changes and
  // checks that a rename or drop is unblocked.
  Status OpenSchemaLog();
  Status UseSchemaEntry(const SchemaLogEntry& entry);
  Result<SchemaLogEntry> EntryAt(int64_t version, const delta::Metadata& metadata,
                                 const delta::DeltaSchema& schema);
  Status AppendSchemaEntry(SchemaLogEntry entry);
  Status MergeConsecutiveSchemaChanges();
  Status CheckSchemaChangeUnblocked();
  // Delta's DELTA_STREAMING_METADATA_EVOLUTION for `entry`, just recorded.
  Status MetadataEvolution(const SchemaLogEntry& entry) const;

  SourceContext ctx_;
  DeltaSourceOptions options_;
  std::unique_ptr<engine::Connection> conn_;
  std::unique_ptr<delta::DeltaTable> table_;
  std::string reservoir_id_;
  engine::Schema schema_;
  int64_t schema_version_ = 0;          // the version schema_ was taken at
  delta::DeltaSchema table_schema_;     // schema_ with its field metadata (column mapping)
  engine::Schema physical_schema_;      // column mapping: schema_ under physical names, else empty
  bool resume_schema_checked_ = false;  // GetBatch compared the resumed version's schema
  std::vector<std::string> partition_columns_;
  std::optional<DeltaStart> start_;
  std::optional<int64_t> available_now_version_;
  std::map<int64_t, std::shared_ptr<const VersionChanges>> changes_cache_;
  std::map<int64_t, std::shared_ptr<const std::vector<delta::AddFile>>> snapshot_cache_;
  int64_t outstanding_files_ = 0;
  int64_t outstanding_bytes_ = 0;
  std::unique_ptr<DeltaSchemaLog> schema_log_;  // null without schemaTrackingLocation
  std::optional<int64_t> schema_log_index_;     // the newest entry's index
  std::optional<SchemaLogEntry> schema_entry_;  // the newest entry
  // The merged entry's predecessor's version: the commits from it to schema_version_ carry no
  // data (checked when merging), so their schemas are not compared with the stream's.
  std::optional<int64_t> merged_from_version_;
};

// Spark's message for a commit that changes existing data, for tests and the CDF source.
std::string DeltaDataUpdateMessage(const std::string& example_path, int64_t version,
                                   const std::string& table_path);

}  // namespace sluice::sources
