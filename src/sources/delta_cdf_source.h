// DeltaCdfSource: `FROM STREAM table_changes('t', v)`, the change data feed of a Delta table as
// a stream (Spark's DeltaSource with readChangeFeed). Rows: the table's columns (the latest
// schema when the source is created) plus _change_type, _commit_version, _commit_timestamp,
// read with DeltaTable::Changes (changes.h).
//
// Offsets have the Delta source's shape (delta_source_offset.h) with index -1 and
// isStartingVersion=false: {"...","reservoirVersion":V,"index":-1,...} means every version
// before V has been read. The first batch starts at startingVersion (or the first commit with
// timestamp >= startingTimestamp; resolved once and persisted in <checkpoint_dir>/delta_start).
// Without either option (Spark's readChangeFeed without a starting version) the stream starts
// with the snapshot at the latest version S as inserts: its rows with _change_type 'insert',
// _commit_version S and _commit_timestamp S's commit timestamp (what Spark 4.2 / Delta 4.4
// give), its files in the Delta source's order (modificationTime, then path) with offsets
// {"reservoirVersion":S,"index":I,"isStartingVersion":true} (files <= I read), taken while
// they fit maxFilesPerTrigger / maxBytesPerTrigger; the batch that reads the snapshot's last
// file ends at (S + 1, -1) and the changes of S + 1, ... follow. An empty snapshot has no batch.
// Batches hold whole commits: commits are taken while the files they touch (cdc files, else
// dataChange adds and removes) fit maxFilesPerTrigger (default 1000) / maxBytesPerTrigger,
// and at least one commit. Commits without changes (OPTIMIZE, metadata) yield no rows.
// A schema change in the range (columns other than the source's) stops the stream naming both
// schemas; after a restart the source takes the new schema. Versions where the change data
// feed was not enabled fail with the reader's error.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "delta/snapshot.h"
#include "delta/table.h"
#include "sources/delta_source_offset.h"
#include "sources/source.h"

namespace sluice::sources {

struct DeltaCdfSourceOptions {
  std::string path;
  std::optional<int64_t> starting_version;
  std::optional<int64_t> starting_timestamp_ms;
  std::optional<int64_t> max_files_per_trigger;
  std::optional<int64_t> max_bytes_per_trigger;
};

class DeltaCdfSource final : public Source {
 public:
  static Result<std::unique_ptr<DeltaCdfSource>> Open(const SourceContext& ctx,
                                                      DeltaCdfSourceOptions options);

  std::string Description() const override { return DescriptionOf(options_.path); }
  // The Description() of a change feed source of the table at `path`, without opening it.
  static std::string DescriptionOf(const std::string& path) {
    return "DeltaSource[" + path + "] (changes)";
  }
  const engine::Schema& schema() const override { return schema_; }
  Result<std::optional<OffsetJson>> LatestOffset(const std::optional<OffsetJson>& start,
                                                 const ReadLimit& limit) override;
  Status PrepareForAvailableNow() override;
  Result<engine::Batch> GetBatch(const std::optional<OffsetJson>& start,
                                 const OffsetJson& end) override;

 private:
  struct CommitCost {
    int64_t files = 0;
    int64_t bytes = 0;
  };
  // Where reading resumes after an offset: the commits from `version`, or (snapshot) the
  // starting snapshot at `version` from its file `next_index`.
  struct Cursor {
    int64_t version = 0;
    bool snapshot = false;
    int64_t next_index = 0;
  };
  DeltaCdfSource(const SourceContext& ctx, DeltaCdfSourceOptions options);
  Result<int64_t> StartVersion();
  Result<Cursor> CursorAfter(const std::optional<OffsetJson>& offset);
  Result<std::shared_ptr<const delta::Snapshot>> StartingSnapshot(int64_t version);
  const std::vector<delta::AddFile>& SnapshotFiles() const { return snapshot_files_; }
  Result<engine::Batch> SnapshotRows(int64_t version, int64_t first, int64_t last);
  Result<CommitCost> Cost(int64_t version);
  Result<int64_t> LatestVersion();

  SourceContext ctx_;
  DeltaCdfSourceOptions options_;
  std::unique_ptr<engine::Connection> conn_;
  std::unique_ptr<delta::DeltaTable> table_;
  std::string reservoir_id_;
  engine::Schema schema_;
  std::optional<int64_t> start_version_;
  bool start_snapshot_ = false;  // no starting option: the snapshot at start_version_ first
  std::shared_ptr<const delta::Snapshot> snapshot_;  // the starting snapshot, once read
  std::vector<delta::AddFile> snapshot_files_;       // its files in reading order
  std::optional<int64_t> available_now_version_;
  std::map<int64_t, CommitCost> cost_cache_;
};

}  // namespace sluice::sources
