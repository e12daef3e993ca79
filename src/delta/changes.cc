#include "delta/changes.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
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
  DeletionVectorLoader dvs(fs, listing.table_root);
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
    // Without cdc files, an add and a remove of the same path of which one carries a deletion
    // vector are one file whose DV changed (a DELETE with DVs): its change rows are the rows the
    // new DV deletes (delete) and those the old DV deleted that the new one does not (insert),
    // as Delta's CDC reader computes them.
    std::map<std::string, const RemoveFile*> dv_removes;
    std::set<std::string> dv_pairs;
    if (!has_cdc) {
      std::map<std::string, const RemoveFile*> removes;
      for (const Action& a : actions) {
        if (const auto* rm = std::get_if<RemoveFile>(&a); rm && rm->data_change)
          removes[rm->path] = rm;
      }
      for (const Action& a : actions) {
        const auto* add = std::get_if<AddFile>(&a);
        if (add == nullptr || !add->data_change) continue;
        auto rm = removes.find(add->path);
        if (rm == removes.end()) continue;
        if (add->deletion_vector || rm->second->deletion_vector) {
          dv_pairs.insert(add->path);
          dv_removes[add->path] = rm->second;
        }
      }
    }
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
        if (dv_pairs.count(add->path)) {
          SLUICE_ASSIGN_OR_RETURN_CTX(std::string resolved,
                                      ResolveLogPath(listing.table_root, add->path), ctx);
          const RemoveFile* rm = dv_removes[add->path];
          RowIndexSet none;
          std::shared_ptr<const RowIndexSet> old_dv, new_dv;
          if (rm->deletion_vector) {
            SLUICE_ASSIGN_OR_RETURN_CTX(old_dv, dvs.Load(*rm->deletion_vector, rm->path), ctx);
          }
          if (add->deletion_vector) {
            SLUICE_ASSIGN_OR_RETURN_CTX(new_dv, dvs.Load(*add->deletion_vector, add->path), ctx);
          }
          const RowIndexSet& o = old_dv ? *old_dv : none;
          const RowIndexSet& n = new_dv ? *new_dv : none;
          for (auto [rows, type] :
               {std::pair{Difference(n, o), "'delete'"}, std::pair{Difference(o, n), "'insert'"}}) {
            if (rows.ranges.empty()) continue;
            FileToRead read{resolved, add->partition_values, {type, version_sql, ts_sql}};
            read.row_filter = std::make_shared<const RowIndexSet>(std::move(rows));
            read.keep_only_filtered = true;
            reads.push_back(std::move(read));
          }
          continue;
        }
        SLUICE_ASSIGN_OR_RETURN_CTX(
            FileToRead read,
            FileToReadForAdd(&dvs, listing.table_root, *add, {"'insert'", version_sql, ts_sql}),
            ctx);
        reads.push_back(std::move(read));
        continue;
      } else if (const auto* rm = std::get_if<RemoveFile>(&a)) {
        if (!rm->data_change || dv_pairs.count(rm->path)) continue;
        path = rm->path;
        pv = rm->partition_values.value_or(PartitionValues{});
        change_type = "'delete'";
        if (rm->deletion_vector) {  // the rows it still had: those its DV did not delete
          SLUICE_ASSIGN_OR_RETURN_CTX(std::string resolved,
                                      ResolveLogPath(listing.table_root, path), ctx);
          FileToRead read{resolved, pv, {change_type, version_sql, ts_sql}};
          SLUICE_ASSIGN_OR_RETURN_CTX(read.row_filter, dvs.Load(*rm->deletion_vector, rm->path),
                                      ctx);
          reads.push_back(std::move(read));
          continue;
        }
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
  SLUICE_ASSIGN_OR_RETURN_CTX(ReadSpec spec,
                              ReadSpecForTable(schema_snap->schema, schema_snap->metadata), ctx);
  spec.extra_columns = {MakeField(kChangeTypeColumn, engine::TypeId::kVarchar),
                        MakeField(kCommitVersionColumn, engine::TypeId::kBigInt),
                        MakeField(kCommitTimestampColumn, engine::TypeId::kTimestampTz)};
  spec.extra_from_file = {kChangeTypeColumn};
  auto batch = ReadFiles(conn, spec, reads);
  if (!batch.ok()) return batch.status().WithContext(ctx);
  return batch;
}

}  // namespace sluice::delta
