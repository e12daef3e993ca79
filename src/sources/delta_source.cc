#include "sources/delta_source.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "delta/column_mapping.h"
#include "delta/log_segment.h"
#include "delta/paths.h"
#include "delta/scan.h"
#include "delta/schema.h"
#include "delta/snapshot.h"
#include "engine/registered_batch.h"
#include "sources/source_util.h"

namespace sluice::sources {

std::string DeltaDataUpdateMessage(const std::string& example_path, int64_t version,
                                   const std::string& table_path) {
  return "Detected a data update (for example " + example_path +
         ") in the source table at version " + std::to_string(version) +
         ". This is currently not supported. If this is going to happen regularly and you are "
         "okay to skip changes, set the option 'skipChangeCommits' to 'true'. If you would like "
         "the data update to be reflected, please restart this query with a fresh checkpoint "
         "directory. The source table can be found at path " +
         table_path + ".";
}

DeltaSource::DeltaSource(const SourceContext& ctx, DeltaSourceOptions options)
    : ctx_(ctx), options_(std::move(options)) {}

Result<std::unique_ptr<DeltaSource>> DeltaSource::Open(const SourceContext& ctx,
                                                       DeltaSourceOptions options) {
  if (!ctx.fs || !ctx.engine)
    return Status::InvalidArgument("DeltaSource: SourceContext needs fs and engine");
  if (options.path.empty())
    return Status::InvalidArgument("delta source: option 'path' is required");
  std::unique_ptr<DeltaSource> src(new DeltaSource(ctx, std::move(options)));
  const std::string ctx_text = src->Description();
  SLUICE_ASSIGN_OR_RETURN_CTX(src->conn_, ctx.engine->Connect(), ctx_text);
  SLUICE_ASSIGN_OR_RETURN_CTX(
      src->table_, delta::DeltaTable::Open(ctx.fs, ctx.engine, src->options_.path), ctx_text);
  SLUICE_ASSIGN_OR_RETURN_CTX(auto snap, src->table_->Latest(), ctx_text);
  src->reservoir_id_ = snap->metadata.id;
  src->schema_ = snap->schema.fields;
  src->schema_version_ = snap->version.value();
  src->partition_columns_ = snap->metadata.partition_columns;
  src->table_schema_ = snap->schema;
  SLUICE_ASSIGN_OR_RETURN_CTX(auto spec, delta::ReadSpecForTable(snap->schema, snap->metadata),
                              ctx_text);
  src->physical_schema_ = std::move(spec.physical_schema);
  if (src->options_.starting_version && src->options_.starting_version != "latest") {
    const std::string& s = *src->options_.starting_version;
    bool digits =
        !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || s.size() > 18) {
      return Status::InvalidArgument(
          ctx_text + ": option 'startingVersion' must be 'latest' or a version number, got '" + s +
          "'");
    }
  }
  if (src->options_.starting_version && src->options_.starting_timestamp_ms) {
    return Status::InvalidArgument(
        ctx_text + ": options 'startingVersion' and 'startingTimestamp' cannot both be set");
  }
  if (src->options_.schema_tracking_location) {
    SLUICE_RETURN_NOT_OK(src->OpenSchemaLog());
  } else if (src->options_.allow_source_column_rename || src->options_.allow_source_column_drop) {
    return Status::InvalidArgument(
        ctx_text +
        ": options 'allowSourceColumnRename' and 'allowSourceColumnDrop' unblock a schema "
        "change recorded in a schema log: set 'schemaTrackingLocation' too");
  }
  return src;
}

Result<int64_t> DeltaSource::LatestVersion() {
  return LatestTableVersion(ctx_.fs.get(), options_.path, Description(), available_now_version_);
}

Result<DeltaStart> DeltaSource::LoadOrCreateStart() {
  if (start_) return *start_;
  std::string path =
      ctx_.checkpoint_dir.empty() ? "" : fs::JoinPath(ctx_.checkpoint_dir, kDeltaStartFile);
  auto parse = [&](const std::string& text) -> Result<DeltaStart> {
    auto bad = Status::Corruption("source start file " + path + " is malformed");
    if (text.rfind("v1\n", 0) != 0) return bad;
    nlohmann::json j = nlohmann::json::parse(text.substr(3), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("reservoirId") ||
        !j["reservoirId"].is_string() || !j.contains("version") ||
        !j["version"].is_number_integer() || !j.contains("snapshot") ||
        !j["snapshot"].is_boolean()) {
      return bad;
    }
    return DeltaStart{j["reservoirId"].get<std::string>(), j["version"].get<int64_t>(),
                      j["snapshot"].get<bool>()};
  };
  if (!path.empty()) {
    auto text = ctx_.fs->ReadFile(path);
    if (text.ok()) {
      SLUICE_ASSIGN_OR_RETURN(DeltaStart s, parse(*text));
      start_ = s;
      return s;
    }
    if (!text.status().IsNotFound()) return text.status().WithContext(Description());
  }
  // Fresh: resolve the starting point now.
  DeltaStart s;
  s.reservoir_id = reservoir_id_;
  SLUICE_ASSIGN_OR_RETURN(int64_t latest, LatestVersion());
  if (options_.starting_version) {
    if (*options_.starting_version == "latest") {
      s.version = latest + 1;
    } else {
      s.version = std::stoll(*options_.starting_version);
      if (s.version > latest + 1) {
        return Status::NotFound(Description() + ": startingVersion " + std::to_string(s.version) +
                                " is beyond the latest version of the table (" +
                                std::to_string(latest) + ")");
      }
    }
  } else if (options_.starting_timestamp_ms) {
    SLUICE_ASSIGN_OR_RETURN_CTX(auto commits, table_->CommitTimestamps(), Description());
    s.version = latest + 1;
    for (const auto& c : commits) {
      if (c.timestamp_ms >= *options_.starting_timestamp_ms) {
        s.version = c.version.value();
        break;
      }
    }
  } else {
    s.version = latest;
    s.snapshot = true;
  }
  if (!path.empty()) {
    nlohmann::ordered_json j;
    j["reservoirId"] = s.reservoir_id;
    j["version"] = s.version;
    j["snapshot"] = s.snapshot;
    Status st = ctx_.fs->CreateIfAbsent(path, "v1\n" + j.dump());
    if (st.IsAlreadyExists()) {
      SLUICE_ASSIGN_OR_RETURN(auto text, ctx_.fs->ReadFile(path));
      SLUICE_ASSIGN_OR_RETURN(s, parse(text));
    } else if (!st.ok()) {
      return st.WithContext(Description());
    }
  }
  if (s.reservoir_id != reservoir_id_) {
    return Status::InvalidArgument(
        Description() + ": the streaming query was reading from an unexpected Delta table (id = '" +
        reservoir_id_ + "'). It used to read from another Delta table (id = '" + s.reservoir_id +
        "') according to the checkpoint: the source table changed (deleted and re-created, or "
        "another table); "
        "a new checkpoint is needed");
  }
  start_ = s;
  return s;
}

Result<DeltaSourceOffset> DeltaSource::ParseChecked(const OffsetJson& json) const {
  SLUICE_ASSIGN_OR_RETURN_CTX(DeltaSourceOffset o, DeltaSourceOffset::Parse(json), Description());
  if (o.reservoir_id != reservoir_id_) {
    return Status::InvalidArgument(
        Description() + ": the streaming query was reading from an unexpected Delta table (id = '" +
        reservoir_id_ + "'). It used to read from another Delta table (id = '" + o.reservoir_id +
        "') according to the checkpoint: the source table changed (deleted and re-created, or "
        "another table); "
        "a new checkpoint is needed");
  }
  return o;
}

Status DeltaSource::IncompatibleSchemaChange(const engine::Schema& data_schema, int64_t version,
                                             const std::string& change) const {
  return Status::InvalidArgument(
      Description() +
      ": [DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG] Streaming read is not "
      "supported on tables with read-incompatible schema changes (e.g. rename or drop or "
      "datatype changes). Please provide a 'schemaTrackingLocation' to enable non-additive "
      "schema evolution for Delta stream processing (or start a new checkpoint). Read "
      "schema: (" +
      SchemaToText(schema_) + "). Incompatible data schema: (" + SchemaToText(data_schema) +
      ") at version " + std::to_string(version) + ": " + change + ".");
}

Result<std::shared_ptr<const std::vector<delta::AddFile>>> DeltaSource::SnapshotFiles(
    int64_t version) {
  auto it = snapshot_cache_.find(version);
  if (it != snapshot_cache_.end()) return it->second;
  SLUICE_ASSIGN_OR_RETURN_CTX(auto snap, table_->SnapshotAt(Version(version)), Description());
  if (snap->metadata.id != reservoir_id_) {
    return Status::InvalidArgument(Description() + ": the table id changed at version " +
                                   std::to_string(version) +
                                   ": the source table changed; a new checkpoint is needed");
  }
  if (auto incompatible = delta::RenameOrDrop(snap->schema, table_schema_)) {
    return IncompatibleSchemaChange(snap->schema.fields, version, *incompatible);
  }
  if (!ReadCompatible(snap->schema.fields, schema_)) {
    return Status::InvalidArgument(
        Description() + ": the schema of the starting snapshot (version " +
        std::to_string(version) + "): " + SchemaToText(snap->schema.fields) +
        " cannot be read with the stream's schema: " + SchemaToText(schema_) +
        "; a new checkpoint is needed");
  }
  auto files = std::make_shared<std::vector<delta::AddFile>>(snap->files);
  std::stable_sort(files->begin(), files->end(),
                   [](const delta::AddFile& a, const delta::AddFile& b) {
                     if (a.modification_time != b.modification_time)
                       return a.modification_time < b.modification_time;
                     return a.path < b.path;
                   });
  snapshot_cache_[version] = files;
  return std::shared_ptr<const std::vector<delta::AddFile>>(files);
}

Result<std::shared_ptr<const DeltaSource::VersionChanges>> DeltaSource::Changes(int64_t version) {
  auto it = changes_cache_.find(version);
  if (it != changes_cache_.end()) return it->second;
  std::string file = fs::JoinPath(fs::JoinPath(options_.path, "_delta_log"),
                                  delta::CommitFileName(Version(version)));
  SLUICE_ASSIGN_OR_RETURN_CTX(auto actions, delta::ReadCommitActions(ctx_.fs.get(), file),
                              Description() + ": reading version " + std::to_string(version));
  auto ch = std::make_shared<VersionChanges>();
  bool any_file_action = false, any_data_change = false;
  std::optional<std::string> removed;
  for (const auto& a : actions) {
    if (const auto* add = std::get_if<delta::AddFile>(&a)) {
      any_file_action = true;
      if (add->data_change) {
        any_data_change = true;
        ch->files.push_back(*add);
      }
    } else if (const auto* rm = std::get_if<delta::RemoveFile>(&a)) {
      any_file_action = true;
      if (rm->data_change) {
        any_data_change = true;
        if (!removed) removed = rm->path;
      }
    } else if (const auto* md = std::get_if<delta::Metadata>(&a)) {
      if (md->id != reservoir_id_) {
        ch->error = Status::InvalidArgument(
            Description() + ": the table id changed at version " + std::to_string(version) +
            " (from '" + reservoir_id_ + "' to '" + md->id +
            "'): the source table changed; a new checkpoint is needed");
        continue;
      }
      auto parsed = delta::ParseSchemaString(md->schema_string);
      if (!parsed.ok()) {
        ch->error =
            parsed.status().WithContext(Description() + ": version " + std::to_string(version));
        continue;
      }
      if (merged_from_version_ && version >= *merged_from_version_ && version < schema_version_) {
        continue;  // merged schema changes without data (MergeConsecutiveSchemaChanges)
      }
      // With a schema log, a later commit that changes the schema ends the stream before it
      // (LatestOffset's barrier); its Commit records the new schema.
      if (schema_log_ && version > schema_version_ &&
          (!SameSchema(parsed->fields, schema_) || delta::RenameOrDrop(table_schema_, *parsed))) {
        if (!ch->metadata_change) {
          SLUICE_ASSIGN_OR_RETURN_CTX(auto snap, table_->SnapshotAt(Version(version)),
                                      Description());
          SLUICE_ASSIGN_OR_RETURN(SchemaLogEntry entry, EntryAt(version, *md, *parsed));
          entry.protocol_json = delta::SerializeAction(delta::Action(snap->protocol));
          ch->metadata_change = std::make_shared<const SchemaLogEntry>(std::move(entry));
        }
        continue;
      }
      // Column mapping: a rename or drop between the commit's schema and the stream's (either
      // way round) is Delta's read-incompatible change.
      std::optional<std::string> incompatible = version > schema_version_
                                                    ? delta::RenameOrDrop(table_schema_, *parsed)
                                                    : delta::RenameOrDrop(*parsed, table_schema_);
      if (incompatible && ch->error.ok()) {
        ch->error = IncompatibleSchemaChange(parsed->fields, version, *incompatible);
        continue;
      }
      bool ok = version > schema_version_ ? SameSchema(parsed->fields, schema_)
                                          : ReadCompatible(parsed->fields, schema_);
      if (!ok && ch->error.ok()) {
        // Additive (every column of the stream's schema is still there with its type): a
        // restart continues; supervisors recognise kAdditiveSchemaChangeTag (delta_source.h).
        const bool additive = version > schema_version_ && ReadCompatible(schema_, parsed->fields);
        const std::string kind =
            additive ? std::string(" ") + kAdditiveSchemaChangeTag : " (not additive)";
        ch->error = Status::InvalidArgument(
            Description() + ": detected a schema change at version " + std::to_string(version) +
            kind + ": streaming source schema: (" + SchemaToText(schema_) +
            "), new table schema: (" + SchemaToText(parsed->fields) +
            "). Please restart the query: an additive change (new columns) continues after a "
            "restart with the "
            "new schema; any other change needs a new checkpoint");
      }
    }
  }
  if (ch->error.ok() && removed) {
    if (options_.skip_change_commits) {
      ch->skipped = true;
      ch->files.clear();
    } else {
      ch->error = Status::InvalidArgument(DeltaDataUpdateMessage(*removed, version, options_.path));
    }
  }
  if (ch->error.ok() && any_file_action && !any_data_change) ch->skipped = true;  // OPTIMIZE
  std::shared_ptr<const VersionChanges> out = ch;
  changes_cache_[version] = out;
  return out;
}

Result<DeltaSource::Cursor> DeltaSource::CursorAfter(const std::optional<OffsetJson>& start) {
  Cursor c;
  if (!start) {
    SLUICE_ASSIGN_OR_RETURN(DeltaStart s, LoadOrCreateStart());
    c.version = s.version;
    c.snapshot = s.snapshot;
    return c;
  }
  SLUICE_ASSIGN_OR_RETURN(DeltaSourceOffset o, ParseChecked(*start));
  c.version = o.reservoir_version;
  if (o.AtMetadataChange()) {
    // Before version V's files, past its schema change.
    c.at_barrier = true;
    c.delivered = true;
    return c;
  }
  c.next_index = o.index + 1;
  c.snapshot = o.is_starting_version;
  c.delivered = true;
  return c;
}

DeltaSource::Limits DeltaSource::EffectiveLimits(const ReadLimit& limit) const {
  Limits l;
  if (limit.all_available) return l;
  l.max_files = limit.max_files ? limit.max_files : options_.max_files_per_trigger;
  l.max_bytes = limit.max_bytes ? limit.max_bytes : options_.max_bytes_per_trigger;
  if (!l.max_files && !l.max_bytes) l.max_files = kDefaultMaxFilesPerTrigger;
  return l;
}

Result<std::optional<OffsetJson>> DeltaSource::LatestOffset(const std::optional<OffsetJson>& start,
                                                            const ReadLimit& limit) {
  SLUICE_ASSIGN_OR_RETURN(Cursor c, CursorAfter(start));
  SLUICE_ASSIGN_OR_RETURN(int64_t latest, LatestVersion());
  Limits lim = EffectiveLimits(limit);
  std::optional<DeltaSourceOffset> result;
  int64_t files = 0, bytes = 0;
  bool full = false;
  outstanding_files_ = 0;
  outstanding_bytes_ = 0;
  auto admit = [&](const delta::AddFile& f) {
    if (files > 0 && ((lim.max_files && files >= *lim.max_files) ||
                      (lim.max_bytes && bytes >= *lim.max_bytes))) {
      full = true;
    }
    if (full) {
      ++outstanding_files_;
      outstanding_bytes_ += f.size;
      return false;
    }
    ++files;
    bytes += f.size;
    return true;
  };
  auto offset = [&](int64_t v, int64_t i, bool snap) {
    return DeltaSourceOffset{reservoir_id_, v, i, snap};
  };
  if (c.snapshot) {
    // The starting snapshot (its version is <= latest: it was the latest when chosen).
    SLUICE_ASSIGN_OR_RETURN(auto snap_files, SnapshotFiles(c.version));
    int64_t n = static_cast<int64_t>(snap_files->size());
    if (!c.delivered) result = offset(c.version, -1, true);
    for (int64_t i = c.next_index; i < n; ++i) {
      if (admit((*snap_files)[static_cast<size_t>(i)])) result = offset(c.version, i, true);
    }
    c = Cursor{c.version + 1, 0, false, false};
  }
  for (int64_t v = c.version; v <= latest; ++v) {
    SLUICE_ASSIGN_OR_RETURN(auto ch, Changes(v));
    if (!ch->error.ok()) {
      if (full || result) break;  // deliver what comes before the failing commit first
      return ch->error;
    }
    if (ch->metadata_change) {
      if (full || result) break;  // deliver what comes before the schema change first
      if (c.at_barrier && v == c.version) {
        // The barrier's batch committed but its entry was not recorded (stopped in between).
        SLUICE_RETURN_NOT_OK(AppendSchemaEntry(*ch->metadata_change));
        return MetadataEvolution(*ch->metadata_change);
      }
      result = DeltaSourceOffset{reservoir_id_, v, DeltaSourceOffset::kMetadataChangeIndex, false};
      break;
    }
    if (ch->skipped) continue;
    int64_t n = static_cast<int64_t>(ch->files.size());
    int64_t first = v == c.version ? c.next_index : 0;
    bool delivered = v == c.version && c.delivered;
    if (n == 0 && !delivered && !full) result = offset(v, -1, false);
    for (int64_t i = first; i < n; ++i) {
      if (admit(ch->files[static_cast<size_t>(i)])) result = offset(v, i, false);
    }
  }
  if (result) return std::optional<OffsetJson>(result->ToJson());
  if (start) return start;
  return std::optional<OffsetJson>();
}

Status DeltaSource::PrepareForAvailableNow() {
  available_now_version_.reset();
  SLUICE_ASSIGN_OR_RETURN(int64_t latest, LatestVersion());
  available_now_version_ = latest;
  return Status::OK();
}

Result<engine::Batch> DeltaSource::GetBatch(const std::optional<OffsetJson>& start,
                                            const OffsetJson& end) {
  SLUICE_ASSIGN_OR_RETURN(Cursor c, CursorAfter(start));
  SLUICE_ASSIGN_OR_RETURN(DeltaSourceOffset e, ParseChecked(end));
  auto before = [&]() {
    if (e.reservoir_version != c.version) return e.reservoir_version < c.version;
    if (e.is_starting_version != c.snapshot) return e.is_starting_version;
    return e.index + 1 < c.next_index;
  };
  if (before()) {
    return Status::InvalidArgument(Description() + ": end offset " + end +
                                   " is before start offset " + start.value_or("(none)"));
  }
  // Column mapping, a restart: the schema in force where the stream resumes (before the commits
  // it reads now) against the read schema, the latest when the source was opened. A rename or
  // drop in between is Delta's read-incompatible change even if no commit read now has it.
  // With a schema log the stream resumes at the version of its schema (or after it).
  if (!c.snapshot && !resume_schema_checked_ && c.version > 0 && c.version <= schema_version_ &&
      !physical_schema_.empty() &&
      !(schema_log_ && c.version >= merged_from_version_.value_or(schema_version_))) {
    // A version no longer reconstructable (log cleanup) cannot be compared: the metadata of
    // the commits read (Changes) is still checked.
    auto resumed = table_->SnapshotAt(Version(c.version - 1));
    if (resumed.ok()) {
      if (auto incompatible = delta::RenameOrDrop((*resumed)->schema, table_schema_)) {
        return IncompatibleSchemaChange((*resumed)->schema.fields, c.version - 1, *incompatible);
      }
    }
    resume_schema_checked_ = true;
  }
  std::vector<delta::FileToRead> to_read;
  delta::DeletionVectorLoader dvs(ctx_.fs.get(), options_.path);
  auto add = [&](const delta::AddFile& f) -> Status {
    // A file with a deletion vector is read without its deleted rows.
    SLUICE_ASSIGN_OR_RETURN(delta::FileToRead read,
                            delta::FileToReadForAdd(&dvs, options_.path, f));
    to_read.push_back(std::move(read));
    return Status::OK();
  };
  if (c.snapshot) {
    SLUICE_ASSIGN_OR_RETURN(auto snap_files, SnapshotFiles(c.version));
    int64_t last = e.is_starting_version ? e.index : static_cast<int64_t>(snap_files->size()) - 1;
    for (int64_t i = c.next_index; i <= last && i < static_cast<int64_t>(snap_files->size()); ++i) {
      SLUICE_RETURN_NOT_OK(add((*snap_files)[static_cast<size_t>(i)]));
    }
    c = Cursor{c.version + 1, 0, false, false};
  }
  if (!e.is_starting_version) {
    for (int64_t v = c.version; v <= e.reservoir_version; ++v) {
      SLUICE_ASSIGN_OR_RETURN(auto ch, Changes(v));
      if (!ch->error.ok()) return ch->error;
      if (ch->metadata_change) {
        if (v == e.reservoir_version && e.AtMetadataChange()) break;  // the barrier: no rows
        return Status::Corruption(Description() + ": offset " + end +
                                  " reads past the schema change at version " + std::to_string(v) +
                                  " without stopping at it");
      }
      if (ch->skipped) continue;
      int64_t first = v == c.version ? c.next_index : 0;
      int64_t last =
          v == e.reservoir_version ? e.index : static_cast<int64_t>(ch->files.size()) - 1;
      if (last >= static_cast<int64_t>(ch->files.size())) {
        return Status::Corruption(Description() + ": offset " + end + " names file index " +
                                  std::to_string(last) + " but version " + std::to_string(v) +
                                  " has " + std::to_string(ch->files.size()) + " data files");
      }
      for (int64_t i = first; i <= last; ++i)
        SLUICE_RETURN_NOT_OK(add(ch->files[static_cast<size_t>(i)]));
    }
  }
  if (to_read.empty()) return engine::EmptyBatch(schema_);
  delta::ReadSpec spec;
  spec.schema = schema_;
  spec.physical_schema = physical_schema_;
  spec.partition_columns = partition_columns_;
  return delta::ReadFiles(conn_.get(), spec, to_read).WithContext(Description());
}

Status DeltaSource::Commit(const OffsetJson& end) {
  SLUICE_ASSIGN_OR_RETURN(DeltaSourceOffset e, ParseChecked(end));
  if (schema_log_ && e.AtMetadataChange() && e.reservoir_version > schema_version_) {
    SLUICE_ASSIGN_OR_RETURN(auto ch, Changes(e.reservoir_version));
    if (!ch->metadata_change) {
      return Status::Corruption(Description() + ": offset " + end +
                                " stops at a schema change, but version " +
                                std::to_string(e.reservoir_version) + " changes no schema");
    }
    SLUICE_RETURN_NOT_OK(AppendSchemaEntry(*ch->metadata_change));
    return MetadataEvolution(*ch->metadata_change);
  }
  changes_cache_.erase(changes_cache_.begin(), changes_cache_.lower_bound(e.reservoir_version));
  if (!e.is_starting_version) snapshot_cache_.clear();
  return Status::OK();
}

std::map<std::string, std::string> DeltaSource::Metrics(
    const std::optional<OffsetJson>& latest) const {
  (void)latest;
  return {{"numBytesOutstanding", std::to_string(outstanding_bytes_)},
          {"numFilesOutstanding", std::to_string(outstanding_files_)}};
}

}  // namespace sluice::sources
