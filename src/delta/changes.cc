#include "delta/changes.h"

#include <map>
#include <string>
#include <vector>

#include "common/strings.h"
#include "delta/paths.h"
#include "delta/protocol_check.h"
#include "delta/scan.h"
#include "delta/snapshot.h"
#include "delta/time_travel.h"
#include "delta/values.h"

namespace sluice::delta {

namespace {

engine::Field MakeField(const char* name, engine::TypeId id) {
  engine::Field f;
  f.name = name;
  f.type.id = id;
  return f;
}

Status NotEnabled(Version start, Version end, Version at) {
  return Status::InvalidArgument(
      "Error getting change data for range [" + start.ToString() + " , " + end.ToString() +
      "] as change data was not recorded for version [" + at.ToString() +
      "]. If you've enabled change data feed on this table, use `DESCRIBE HISTORY` "
      "to see when it was first enabled. Otherwise, to start recording change data, "
      "use `ALTER TABLE table_name SET TBLPROPERTIES "
      "(delta.enableChangeDataFeed=true)`.");
}

}  // namespace

Result<engine::Batch> ReadChanges(fs::FileSystem* fs, engine::Connection* conn,
                                  const LogListing& listing, Version start,
                                  std::optional<Version> end_opt, ChangesSchema schema) {
  std::string ctx = "reading changes of " + listing.table_root;
  auto latest = listing.LatestVersion();
  if (!latest) return Status::NotFound("empty Delta log in " + listing.log_dir);
  if (start.value() < 0)
    return Status::InvalidArgument("CDC start version must be >= 0, got " + start.ToString());
  if (start > *latest) {
    return Status::InvalidArgument(
        "Provided Start version(" + start.ToString() +
        ") for reading change data is invalid. Start version cannot be greater than "
        "the latest version of the table(" +
        latest->ToString() + ").");
  }
  Version end = end_opt.value_or(*latest);
  if (end < start) {
    return Status::InvalidArgument("CDC range from start " + start.ToString() + " to end " +
                                   end.ToString() + " was invalid. End cannot be before start.");
  }
  if (end > *latest) end = *latest;

  // Snapshot at start gives the metadata in force there; later metaData actions update it.
  SLUICE_ASSIGN_OR_RETURN_CTX(LogSegment start_seg, BuildLogSegment(listing, start), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(auto start_snap, LoadSnapshot(fs, conn, listing, start_seg), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(LogSegment end_seg, BuildLogSegment(listing, end), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(auto end_snap, LoadSnapshot(fs, conn, listing, end_seg), ctx);

  SLUICE_ASSIGN_OR_RETURN_CTX(auto timestamps,
                              ListCommitTimestamps(fs, listing, &end_snap->metadata), ctx);
  std::map<Version, int64_t> ts_of;
  for (const CommitTimestamp& c : timestamps) ts_of[c.version] = c.timestamp_ms;

  Metadata metadata = start_snap->metadata;
  Protocol protocol = start_snap->protocol;
  std::vector<FileToRead> reads;
  for (int64_t v = start.value(); v <= end.value(); ++v) {
    Version version(v);
    auto commit = listing.commits.find(version);
    if (commit == listing.commits.end()) {
      return Status::NotFound(
          "cannot read change data of version " + version.ToString() + ": commit file " +
          fs::JoinPath(listing.log_dir, CommitFileName(version)) + " is missing (log cleaned up)");
    }
    SLUICE_ASSIGN_OR_RETURN(auto actions, ReadCommitActions(fs, commit->second.info.path));
    for (const Action& a : actions) {
      if (const auto* m = std::get_if<Metadata>(&a)) metadata = *m;
      if (const auto* p = std::get_if<Protocol>(&a)) protocol = *p;
    }
    SLUICE_RETURN_NOT_OK_CTX(CheckReadSupported(protocol, metadata),
                             ctx + " at version " + version.ToString());
    if (!metadata.ConfigIsTrue("delta.enableChangeDataFeed"))
      return NotEnabled(start, end, version);
    auto ts = ts_of.find(version);
    int64_t commit_ts = ts != ts_of.end() ? ts->second : commit->second.info.mtime_ms;
    std::string version_sql = "CAST(" + std::to_string(v) + " AS BIGINT)";
    std::string ts_sql =
        "CAST(" + QuoteLiteral(FormatTimestampMicros(commit_ts * 1000)) + " AS TIMESTAMPTZ)";
    bool has_cdc = false;
    for (const Action& a : actions) has_cdc |= std::holds_alternative<AddCdcFile>(a);
    for (const Action& a : actions) {
      std::string path;
      PartitionValues pv;
      std::string change_type;
      if (has_cdc) {
        const auto* c = std::get_if<AddCdcFile>(&a);
        if (c == nullptr) continue;
        path = c->path;
        pv = c->partition_values;
        change_type = "CAST(NULL AS VARCHAR)";  // from the file's _change_type column
      } else if (const auto* add = std::get_if<AddFile>(&a)) {
        if (!add->data_change) continue;
        path = add->path;
        pv = add->partition_values;
        change_type = "'insert'";
      } else if (const auto* rm = std::get_if<RemoveFile>(&a)) {
        if (!rm->data_change) continue;
        path = rm->path;
        pv = rm->partition_values.value_or(PartitionValues{});
        change_type = "'delete'";
      } else {
        continue;
      }
      SLUICE_ASSIGN_OR_RETURN_CTX(std::string resolved, ResolveLogPath(listing.table_root, path),
                                  ctx);
      reads.push_back(FileToRead{resolved, pv, {change_type, version_sql, ts_sql}});
    }
  }
  // The columns: the latest schema (Spark's batch feed), unless the caller wants the end's.
  auto schema_snap = end_snap;
  if (schema == ChangesSchema::kLatest && end != *latest) {
    SLUICE_ASSIGN_OR_RETURN_CTX(LogSegment latest_seg, BuildLogSegment(listing, *latest), ctx);
    SLUICE_ASSIGN_OR_RETURN_CTX(schema_snap, LoadSnapshot(fs, conn, listing, latest_seg), ctx);
  }
  ReadSpec spec;
  spec.schema = schema_snap->schema.fields;
  spec.partition_columns = schema_snap->metadata.partition_columns;
  spec.extra_columns = {MakeField(kChangeTypeColumn, engine::TypeId::kVarchar),
                        MakeField(kCommitVersionColumn, engine::TypeId::kBigInt),
                        MakeField(kCommitTimestampColumn, engine::TypeId::kTimestampTz)};
  spec.extra_from_file = {kChangeTypeColumn};
  auto batch = ReadFiles(conn, spec, reads);
  if (!batch.ok()) return batch.status().WithContext(ctx);
  return batch;
}

}  // namespace sluice::delta
