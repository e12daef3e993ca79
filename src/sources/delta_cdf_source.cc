#include "sources/delta_cdf_source.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "delta/changes.h"
#include "delta/log_segment.h"
#include "delta/paths.h"
#include "delta/scan.h"
#include "delta/snapshot.h"
#include "delta/values.h"
#include "engine/registered_batch.h"
#include "sources/delta_source.h"
#include "sources/source_options.h"
#include "sources/source_util.h"

namespace sluice::sources {

DeltaCdfSource::DeltaCdfSource(const SourceContext& ctx, DeltaCdfSourceOptions options)
    : ctx_(ctx), options_(std::move(options)) {}

Result<std::unique_ptr<DeltaCdfSource>> DeltaCdfSource::Open(const SourceContext& ctx,
                                                             DeltaCdfSourceOptions options) {
  if (!ctx.fs || !ctx.engine)
    return Status::InvalidArgument("DeltaCdfSource: SourceContext needs fs and engine");
  if (options.path.empty())
    return Status::InvalidArgument("table_changes: option 'path' is required");
  if (options.starting_version && options.starting_timestamp_ms) {
    return Status::InvalidArgument(
        "table_changes: the options 'startingVersion' and 'startingTimestamp' exclude each other");
  }
  std::unique_ptr<DeltaCdfSource> src(new DeltaCdfSource(ctx, std::move(options)));
  SLUICE_ASSIGN_OR_RETURN_CTX(src->conn_, ctx.engine->Connect(), src->Description());
  SLUICE_ASSIGN_OR_RETURN_CTX(src->table_,
                              delta::DeltaTable::Open(ctx.fs, ctx.engine, src->options_.path),
                              src->Description());
  SLUICE_ASSIGN_OR_RETURN_CTX(auto snap, src->table_->Latest(), src->Description());
  src->reservoir_id_ = snap->metadata.id;
  src->schema_ = snap->schema.fields;
  engine::DataType varchar, big, ts;
  varchar.id = engine::TypeId::kVarchar;
  big.id = engine::TypeId::kBigInt;
  ts.id = engine::TypeId::kTimestampTz;
  src->schema_.push_back(engine::Field{delta::kChangeTypeColumn, varchar, true});
  src->schema_.push_back(engine::Field{delta::kCommitVersionColumn, big, true});
  src->schema_.push_back(engine::Field{delta::kCommitTimestampColumn, ts, true});
  return src;
}

Result<int64_t> DeltaCdfSource::LatestVersion() {
  return LatestTableVersion(ctx_.fs.get(), options_.path, Description(), available_now_version_);
}

Result<int64_t> DeltaCdfSource::StartVersion() {
  if (start_version_) return *start_version_;
  std::string path =
      ctx_.checkpoint_dir.empty() ? "" : fs::JoinPath(ctx_.checkpoint_dir, "delta_start");
  auto parse = [&](const std::string& text) -> Result<int64_t> {
    nlohmann::json j = text.rfind("v1\n", 0) == 0
                           ? nlohmann::json::parse(text.substr(3), nullptr, false)
                           : nlohmann::json();
    if (!j.is_object() || !j.contains("version") || !j["version"].is_number_integer() ||
        !j.contains("reservoirId") || !j["reservoirId"].is_string()) {
      return Status::Corruption("source start file " + path + " is malformed");
    }
    if (j["reservoirId"].get<std::string>() != reservoir_id_) {
      return Status::InvalidArgument(
          Description() + ": the streaming query was reading from another Delta table (id = '" +
          j["reservoirId"].get<std::string>() + "', now '" + reservoir_id_ +
          "'): the source table changed; a new checkpoint is needed");
    }
    start_snapshot_ =
        j.contains("snapshot") && j["snapshot"].is_boolean() && j["snapshot"].get<bool>();
    return j["version"].get<int64_t>();
  };
  if (!path.empty()) {
    auto text = ctx_.fs->ReadFile(path);
    if (text.ok()) {
      SLUICE_ASSIGN_OR_RETURN(int64_t v, parse(*text));
      start_version_ = v;
      return v;
    }
    if (!text.status().IsNotFound()) return text.status().WithContext(Description());
  }
  int64_t v = 0;
  bool snapshot = false;
  if (options_.starting_version) {
    v = *options_.starting_version;
  } else if (!options_.starting_timestamp_ms) {
    SLUICE_ASSIGN_OR_RETURN(v, LatestVersion());  // the snapshot at the latest version first
    snapshot = true;
  } else {
    SLUICE_ASSIGN_OR_RETURN(int64_t latest, LatestVersion());
    SLUICE_ASSIGN_OR_RETURN_CTX(auto commits, table_->CommitTimestamps(), Description());
    v = latest + 1;
    for (const auto& c : commits) {
      if (c.timestamp_ms >= *options_.starting_timestamp_ms) {
        v = c.version.value();
        break;
      }
    }
  }
  start_snapshot_ = snapshot;  // parse() below replaces it with the persisted choice
  if (!path.empty()) {
    nlohmann::ordered_json j;
    j["reservoirId"] = reservoir_id_;
    j["version"] = v;
    j["snapshot"] = snapshot;
    Status st = ctx_.fs->CreateIfAbsent(path, "v1\n" + j.dump());
    if (st.IsAlreadyExists()) {
      SLUICE_ASSIGN_OR_RETURN(std::string text, ctx_.fs->ReadFile(path));
      SLUICE_ASSIGN_OR_RETURN(v, parse(text));
    } else if (!st.ok()) {
      return st.WithContext(Description());
    }
  }
  start_version_ = v;
  return v;
}

Result<DeltaCdfSource::Cursor> DeltaCdfSource::CursorAfter(
    const std::optional<OffsetJson>& offset) {
  if (!offset) {
    SLUICE_ASSIGN_OR_RETURN(int64_t v, StartVersion());
    return Cursor{v, start_snapshot_, 0};
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(DeltaSourceOffset o, DeltaSourceOffset::Parse(*offset),
                              Description());
  if (o.reservoir_id != reservoir_id_) {
    return Status::InvalidArgument(
        Description() + ": the streaming query was reading from another Delta table (id = '" +
        o.reservoir_id + "', now '" + reservoir_id_ +
        "'): the source table changed; a new checkpoint is needed");
  }
  if (o.is_starting_version) return Cursor{o.reservoir_version, true, o.index + 1};
  return Cursor{o.reservoir_version, false, 0};
}

Result<std::shared_ptr<const delta::Snapshot>> DeltaCdfSource::StartingSnapshot(int64_t version) {
  if (snapshot_ && snapshot_->version.value() == version) return snapshot_;
  SLUICE_ASSIGN_OR_RETURN_CTX(auto snap, table_->SnapshotAt(Version(version)), Description());
  if (snap->metadata.id != reservoir_id_) {
    return Status::InvalidArgument(Description() + ": the table id changed at version " +
                                   std::to_string(version) +
                                   ": the source table changed; a new checkpoint is needed");
  }
  engine::Schema src_cols(schema_.begin(), schema_.end() - 3);
  if (!ReadCompatible(snap->schema.fields, src_cols)) {
    return Status::InvalidArgument(
        Description() + ": the schema of the starting snapshot (version " +
        std::to_string(version) + "): " + SchemaToText(snap->schema.fields) +
        " cannot be read with the stream's schema: " + SchemaToText(src_cols) +
        "; a new checkpoint is needed");
  }
  // The Delta source's order of a starting snapshot's files (delta_source.h).
  snapshot_files_ = snap->files;
  std::stable_sort(snapshot_files_.begin(), snapshot_files_.end(),
                   [](const delta::AddFile& a, const delta::AddFile& b) {
                     if (a.modification_time != b.modification_time)
                       return a.modification_time < b.modification_time;
                     return a.path < b.path;
                   });
  snapshot_ = std::move(snap);
  return snapshot_;
}

Result<engine::Batch> DeltaCdfSource::SnapshotRows(int64_t version, int64_t first, int64_t last) {
  SLUICE_ASSIGN_OR_RETURN(auto snap, StartingSnapshot(version));
  const int64_t n = static_cast<int64_t>(SnapshotFiles().size());
  if (first < 0 || last >= n) {
    return Status::Corruption(Description() + ": an offset names file index " +
                              std::to_string(last) + " of the starting snapshot at version " +
                              std::to_string(version) + ", which has " + std::to_string(n) +
                              " files");
  }
  // Spark: the snapshot's rows are inserts of the snapshot's version, at its commit timestamp:
  // the one the change feed gives that version (file times made increasing), not the snapshot's
  // own file time, which is 1 ms off when two commits share a millisecond.
  int64_t commit_ms = snap->timestamp_ms;
  SLUICE_ASSIGN_OR_RETURN_CTX(auto commits, table_->CommitTimestamps(), Description());
  for (const auto& c : commits) {
    if (c.version.value() == version) commit_ms = c.timestamp_ms;
  }
  const std::vector<std::string> extra = {
      QuoteLiteral("insert"), "CAST(" + std::to_string(version) + " AS BIGINT)",
      "CAST(" + QuoteLiteral(delta::FormatTimestampMicros(commit_ms * 1000)) + " AS TIMESTAMPTZ)"};
  std::vector<delta::FileToRead> to_read;
  delta::DeletionVectorLoader dvs(ctx_.fs.get(), options_.path);
  for (int64_t i = first; i <= last; ++i) {
    const delta::AddFile& f = SnapshotFiles()[static_cast<size_t>(i)];
    SLUICE_ASSIGN_OR_RETURN(delta::FileToRead read,
                            delta::FileToReadForAdd(&dvs, options_.path, f, extra));
    to_read.push_back(std::move(read));
  }
  if (to_read.empty()) return engine::EmptyBatch(schema_);
  SLUICE_ASSIGN_OR_RETURN_CTX(delta::ReadSpec spec,
                              delta::ReadSpecForTable(snap->schema, snap->metadata), Description());
  engine::Schema src_cols(schema_.begin(), schema_.end() - 3);
  if (!spec.physical_schema.empty() && !SameSchema(spec.schema, src_cols)) {
    // Column mapping: the files' physical names are the snapshot's; another logical schema
    // (a rename or drop since) cannot be matched to them here.
    return Status::InvalidArgument(
        Description() + ": the schema of the starting snapshot (version " +
        std::to_string(version) + "): " + SchemaToText(snap->schema.fields) +
        " differs from the stream's schema " + SchemaToText(src_cols) +
        " on a table with column mapping; a new checkpoint is needed");
  }
  spec.schema = std::move(src_cols);
  spec.extra_columns.assign(schema_.end() - 3, schema_.end());
  return delta::ReadFiles(conn_.get(), spec, to_read).WithContext(Description());
}

Result<DeltaCdfSource::CommitCost> DeltaCdfSource::Cost(int64_t version) {
  auto it = cost_cache_.find(version);
  if (it != cost_cache_.end()) return it->second;
  std::string file = fs::JoinPath(fs::JoinPath(options_.path, "_delta_log"),
                                  delta::CommitFileName(Version(version)));
  SLUICE_ASSIGN_OR_RETURN_CTX(auto actions, delta::ReadCommitActions(ctx_.fs.get(), file),
                              Description());
  CommitCost cdc, data;
  for (const auto& a : actions) {
    if (const auto* c = std::get_if<delta::AddCdcFile>(&a)) {
      ++cdc.files;
      cdc.bytes += c->size;
    } else if (const auto* add = std::get_if<delta::AddFile>(&a)) {
      if (add->data_change) {
        ++data.files;
        data.bytes += add->size;
      }
    } else if (const auto* rm = std::get_if<delta::RemoveFile>(&a)) {
      if (rm->data_change) {
        ++data.files;
        data.bytes += rm->size.value_or(0);
      }
    }
  }
  CommitCost cost = cdc.files > 0 ? cdc : data;
  cost_cache_[version] = cost;
  return cost;
}

Result<std::optional<OffsetJson>> DeltaCdfSource::LatestOffset(
    const std::optional<OffsetJson>& start, const ReadLimit& limit) {
  SLUICE_ASSIGN_OR_RETURN(Cursor c, CursorAfter(start));
  std::optional<int64_t> max_files, max_bytes;
  if (!limit.all_available) {
    max_files = limit.max_files ? limit.max_files : options_.max_files_per_trigger;
    max_bytes = limit.max_bytes ? limit.max_bytes : options_.max_bytes_per_trigger;
    if (!max_files && !max_bytes) max_files = 1000;
  }
  if (c.snapshot) {
    SLUICE_RETURN_NOT_OK(StartingSnapshot(c.version).status());
    const int64_t n = static_cast<int64_t>(SnapshotFiles().size());
    if (c.next_index < n) {
      int64_t files = 0, bytes = 0, last = c.next_index;
      for (int64_t i = c.next_index; i < n; ++i) {
        if (i > c.next_index &&
            ((max_files && files + 1 > *max_files) || (max_bytes && bytes >= *max_bytes)))
          break;
        ++files;
        bytes += SnapshotFiles()[static_cast<size_t>(i)].size;
        last = i;
      }
      const DeltaSourceOffset end = last + 1 < n
                                        ? DeltaSourceOffset{reservoir_id_, c.version, last, true}
                                        : DeltaSourceOffset{reservoir_id_, c.version + 1,
                                                            DeltaSourceOffset::kBaseIndex, false};
      return std::optional<OffsetJson>(end.ToJson());
    }
    c = Cursor{c.version + 1, false, 0};  // an empty snapshot: the changes after it
  }
  const int64_t next = c.version;
  SLUICE_ASSIGN_OR_RETURN(int64_t latest, LatestVersion());
  if (next > latest) return start;
  int64_t files = 0, bytes = 0, end = next;
  for (int64_t v = next; v <= latest; ++v) {
    SLUICE_ASSIGN_OR_RETURN(CommitCost c, Cost(v));
    if (v > next &&
        ((max_files && files + c.files > *max_files) || (max_bytes && bytes >= *max_bytes)))
      break;
    files += c.files;
    bytes += c.bytes;
    end = v + 1;
  }
  cost_cache_.erase(cost_cache_.begin(), cost_cache_.lower_bound(next));
  return std::optional<OffsetJson>(
      DeltaSourceOffset{reservoir_id_, end, DeltaSourceOffset::kBaseIndex, false}.ToJson());
}

Status DeltaCdfSource::PrepareForAvailableNow() {
  available_now_version_.reset();
  SLUICE_ASSIGN_OR_RETURN(int64_t latest, LatestVersion());
  available_now_version_ = latest;
  return Status::OK();
}

Result<engine::Batch> DeltaCdfSource::GetBatch(const std::optional<OffsetJson>& start,
                                               const OffsetJson& end) {
  SLUICE_ASSIGN_OR_RETURN(Cursor c, CursorAfter(start));
  SLUICE_ASSIGN_OR_RETURN(Cursor e, CursorAfter(end));
  if (c.snapshot) {
    // The snapshot's files up to the end offset's index, or (end past the snapshot) its last.
    SLUICE_RETURN_NOT_OK(StartingSnapshot(c.version).status());
    const int64_t n = static_cast<int64_t>(SnapshotFiles().size());
    if (e.snapshot && e.version == c.version) {
      return SnapshotRows(c.version, c.next_index, e.next_index - 1);
    }
    if (!e.snapshot && e.version == c.version + 1) {
      return SnapshotRows(c.version, c.next_index, n - 1);
    }
    return Status::InvalidArgument(
        Description() + ": the offsets " + start.value_or("(none)") + " .. " + end +
        " do not name a range of the starting snapshot at version " + std::to_string(c.version));
  }
  if (e.snapshot) {
    return Status::InvalidArgument(Description() + ": end offset " + end +
                                   " is before start offset " + start.value_or("(none)"));
  }
  const int64_t first = c.version;
  const int64_t after = e.version;
  if (after < first) {
    return Status::InvalidArgument(Description() + ": end offset " + end +
                                   " is before start offset " + *start);
  }
  if (after == first) return engine::EmptyBatch(schema_);
  SLUICE_ASSIGN_OR_RETURN_CTX(
      engine::Batch rows,
      table_->Changes(Version(first), Version(after - 1), delta::ChangesSchema::kEndVersion),
      Description() + ": versions " + std::to_string(first) + ".." + std::to_string(after - 1));
  // The reader gives the end version's schema; the stream keeps its own.
  engine::Schema data = rows.schema();
  std::vector<std::string> extra;
  for (const auto& f : data) {
    bool known = false;
    for (const auto& s : schema_) known = known || AsciiLower(s.name) == AsciiLower(f.name);
    if (!known) extra.push_back(f.name);
  }
  engine::Schema data_cols(data.begin(), data.end() - std::min<size_t>(3, data.size()));
  engine::Schema src_cols(schema_.begin(), schema_.end() - 3);
  if (!extra.empty() || !ReadCompatible(data_cols, src_cols)) {
    // Additive when the stream's columns all remain with their types (delta_source.h's tag:
    // supervisors restart on it).
    const bool additive = ReadCompatible(src_cols, data_cols);
    const std::string kind =
        additive ? std::string(" ") + kAdditiveSchemaChangeTag : " (not additive)";
    return Status::InvalidArgument(
        Description() + ": detected a schema change in versions " + std::to_string(first) + ".." +
        std::to_string(after - 1) + kind + ": streaming source schema: (" + SchemaToText(src_cols) +
        "), table schema: (" + SchemaToText(data_cols) +
        "). Please restart the query: an additive change continues after a restart with "
        "the new schema; any other change needs a new checkpoint");
  }
  if (SameSchema(data, schema_)) return rows;
  std::string sql = "SELECT ";
  for (size_t i = 0; i < schema_.size(); ++i) {
    bool present = false;
    for (const auto& f : data)
      present = present || AsciiLower(f.name) == AsciiLower(schema_[i].name);
    sql += (i ? ", " : "") +
           (present ? QuoteIdentifier(schema_[i].name)
                    : "CAST(NULL AS " + schema_[i].type.ToSql() + ")") +
           " AS " + QuoteIdentifier(schema_[i].name);
  }
  return engine::QueryOver(conn_.get(), "sluice_cdf_rows", rows, sql + " FROM sluice_cdf_rows");
}

}  // namespace sluice::sources
