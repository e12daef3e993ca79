// DeltaSource's schema log (option schemaTrackingLocation; delta_source.h, docs/delta.md
// "Streaming across RENAME / DROP COLUMN"): opening the log, the entries it records, the merge
// of consecutive schema changes and the unblock check, with Delta's error texts.
#include <algorithm>

#include "common/strings.h"
#include "delta/column_mapping.h"
#include "delta/scan.h"
#include "delta/schema.h"
#include "delta/snapshot.h"
#include "sources/delta_source.h"
#include "sources/source_util.h"

namespace sluice::sources {

namespace {

bool IsAbsolutePath(const std::string& path) {
  return (!path.empty() && path[0] == '/') || !fs::PathScheme(path).empty();
}

std::string WithoutTrailingSlash(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// "always" or the version, as Delta's reader options take them.
bool Unblocks(const std::optional<std::string>& option, int64_t version) {
  if (!option) return false;
  return AsciiEqualsIgnoreCase(*option, "always") || *option == std::to_string(version);
}

}  // namespace

Status DeltaSource::OpenSchemaLog() {
  const std::string& location = *options_.schema_tracking_location;
  if (ctx_.checkpoint_dir.empty()) {
    return Status::InvalidArgument(Description() +
                                   ": option 'schemaTrackingLocation' needs a streaming query "
                                   "with a checkpoint");
  }
  if (location.empty()) {
    return Status::InvalidArgument(Description() +
                                   ": option 'schemaTrackingLocation' must not be empty");
  }
  // ctx_.checkpoint_dir is <checkpoint>/sources/<i>.
  const std::string root = fs::DirName(fs::DirName(ctx_.checkpoint_dir));
  std::string dir;
  if (IsAbsolutePath(location)) {
    dir = WithoutTrailingSlash(location);
    const std::string under = WithoutTrailingSlash(root);
    if (dir != under && dir.rfind(under + "/", 0) != 0) {
      return Status::InvalidArgument(
          Description() +
          ": [DELTA_STREAMING_SCHEMA_LOCATION_NOT_UNDER_CHECKPOINT] Schema "
          "location '" +
          location + "' must be placed under checkpoint location '" + root +
          "' (a relative schemaTrackingLocation is taken under the checkpoint)");
    }
  } else {
    dir = fs::JoinPath(root, location);
  }
  schema_log_ = std::make_unique<DeltaSchemaLog>(ctx_.fs, dir, reservoir_id_);
  SLUICE_ASSIGN_OR_RETURN_CTX(auto latest, schema_log_->Latest(), Description());
  if (!latest) {
    // Entry 0: the schema at the version a new stream starts from. A checkpoint that streamed
    // without a log keeps the schema it has read with until now, the latest.
    SLUICE_ASSIGN_OR_RETURN_CTX(bool started,
                                ctx_.fs->Exists(fs::JoinPath(ctx_.checkpoint_dir, kDeltaStartFile)),
                                Description());
    SLUICE_ASSIGN_OR_RETURN(DeltaStart start, LoadOrCreateStart());
    SLUICE_ASSIGN_OR_RETURN(int64_t newest, LatestVersion());
    const int64_t version = started ? newest : std::min(start.version, newest);
    SLUICE_ASSIGN_OR_RETURN_CTX(auto snap, table_->SnapshotAt(Version(version)), Description());
    SLUICE_ASSIGN_OR_RETURN(SchemaLogEntry entry, EntryAt(version, snap->metadata, snap->schema));
    entry.protocol_json = delta::SerializeAction(delta::Action(snap->protocol));
    SLUICE_RETURN_NOT_OK(AppendSchemaEntry(entry));
    return UseSchemaEntry(*schema_entry_);
  }
  schema_log_index_ = latest->first;
  schema_entry_ = latest->second;
  if (schema_entry_->previous_metadata_seq_num) {
    // A merged entry: the series of changes began at the entry after the one it names.
    SLUICE_ASSIGN_OR_RETURN_CTX(SchemaLogEntry first,
                                schema_log_->Get(*schema_entry_->previous_metadata_seq_num + 1),
                                Description());
    merged_from_version_ = first.delta_commit_version;
  }
  SLUICE_RETURN_NOT_OK(UseSchemaEntry(*schema_entry_));
  SLUICE_RETURN_NOT_OK(MergeConsecutiveSchemaChanges());
  return CheckSchemaChangeUnblocked();
}

Status DeltaSource::UseSchemaEntry(const SchemaLogEntry& entry) {
  const std::string where = Description() + ": schema log " + schema_log_->dir() +
                            " entry at version " + std::to_string(entry.delta_commit_version);
  SLUICE_ASSIGN_OR_RETURN_CTX(delta::DeltaSchema schema,
                              delta::ParseSchemaString(entry.data_schema_json), where);
  SLUICE_ASSIGN_OR_RETURN_CTX(delta::DeltaSchema partitions,
                              delta::ParseSchemaString(entry.partition_schema_json), where);
  delta::Metadata md;
  md.id = reservoir_id_;
  md.schema_string = entry.data_schema_json;
  for (const engine::Field& f : partitions.fields) md.partition_columns.push_back(f.name);
  md.configuration = entry.table_configurations;
  SLUICE_ASSIGN_OR_RETURN_CTX(auto spec, delta::ReadSpecForTable(schema, md), where);
  schema_ = schema.fields;
  table_schema_ = std::move(schema);
  schema_version_ = entry.delta_commit_version;
  partition_columns_ = std::move(md.partition_columns);
  physical_schema_ = std::move(spec.physical_schema);
  changes_cache_.clear();  // their schema changes were found against the schema before
  snapshot_cache_.clear();
  return Status::OK();
}

Result<SchemaLogEntry> DeltaSource::EntryAt(int64_t version, const delta::Metadata& metadata,
                                            const delta::DeltaSchema& schema) {
  SchemaLogEntry e;
  e.table_id = reservoir_id_;
  e.delta_commit_version = version;
  e.data_schema_json = metadata.schema_string;
  engine::Schema partition_fields;
  delta::FieldMetadata partition_metadata;
  for (const std::string& name : metadata.partition_columns) {
    const engine::Field* f = delta::FindField(schema.fields, name);
    if (!f) {
      return Status::Corruption(Description() + ": version " + std::to_string(version) +
                                " partitions by '" + name + "', which is not in its schema");
    }
    partition_fields.push_back(*f);
    if (auto it = schema.metadata.find(f->name); it != schema.metadata.end()) {
      partition_metadata[f->name] = it->second;
    }
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(e.partition_schema_json,
                              delta::SchemaToJson(partition_fields, partition_metadata),
                              Description());
  e.source_metadata_path = ctx_.checkpoint_dir;
  e.table_configurations = metadata.configuration;
  return e;
}

Status DeltaSource::AppendSchemaEntry(SchemaLogEntry entry) {
  const int64_t index = schema_log_index_ ? *schema_log_index_ + 1 : 0;
  Status st = schema_log_->Append(index, entry);
  if (st.IsAlreadyExists()) {
    // Another run of this query recorded it first: the same change, or the log is shared.
    SLUICE_ASSIGN_OR_RETURN_CTX(SchemaLogEntry theirs, schema_log_->Get(index), Description());
    if (theirs.delta_commit_version != entry.delta_commit_version ||
        theirs.data_schema_json != entry.data_schema_json) {
      return Status::AlreadyExists(
          Description() + ": schema log " + schema_log_->dir() + " entry " + std::to_string(index) +
          " records version " + std::to_string(theirs.delta_commit_version) +
          ", this stream version " + std::to_string(entry.delta_commit_version) +
          ": another stream writes this schemaTrackingLocation (give each stream its own)");
    }
    entry = std::move(theirs);
  } else if (!st.ok()) {
    return st.WithContext(Description() + ": schema log " + schema_log_->dir());
  }
  schema_log_index_ = index;
  schema_entry_ = std::move(entry);
  return Status::OK();
}

Status DeltaSource::MergeConsecutiveSchemaChanges() {
  // Only an entry recorded at a schema change (index >= 1): the stream resumes at its barrier.
  if (!schema_log_index_ || *schema_log_index_ < 1) return Status::OK();
  const int64_t previous =
      schema_entry_->previous_metadata_seq_num.value_or(*schema_log_index_ - 1);
  SLUICE_ASSIGN_OR_RETURN(int64_t latest, LatestVersion());
  if (schema_version_ > latest) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN(auto at_change, Changes(schema_version_));
  if (!at_change->error.ok() || !at_change->files.empty()) return Status::OK();
  std::shared_ptr<const SchemaLogEntry> merged;
  const int64_t from_version = merged_from_version_.value_or(schema_version_);
  for (int64_t v = schema_version_ + 1; v <= latest; ++v) {
    SLUICE_ASSIGN_OR_RETURN(auto ch, Changes(v));
    if (!ch->error.ok()) break;  // reported when the stream reaches it
    if (ch->metadata_change) {
      merged = ch->metadata_change;
      merged_from_version_ = from_version;
      SLUICE_RETURN_NOT_OK(UseSchemaEntry(*merged));
      SLUICE_ASSIGN_OR_RETURN(ch, Changes(v));
    }
    if (!ch->files.empty()) break;  // data under this schema from here on
  }
  if (!merged) return Status::OK();
  SchemaLogEntry entry = *merged;
  entry.previous_metadata_seq_num = previous;
  return AppendSchemaEntry(std::move(entry));
}

Status DeltaSource::CheckSchemaChangeUnblocked() {
  if (!schema_log_index_ || *schema_log_index_ < 1) return Status::OK();
  const int64_t previous_index =
      schema_entry_->previous_metadata_seq_num.value_or(*schema_log_index_ - 1);
  SLUICE_ASSIGN_OR_RETURN_CTX(SchemaLogEntry previous, schema_log_->Get(previous_index),
                              Description());
  SLUICE_ASSIGN_OR_RETURN_CTX(
      delta::DeltaSchema from, delta::ParseSchemaString(previous.data_schema_json),
      Description() + ": schema log entry " + std::to_string(previous_index));
  const delta::ColumnChanges changes = delta::RenamesAndDrops(from, table_schema_);
  if (changes.empty()) return Status::OK();
  const bool rename_ok =
      changes.renamed.empty() || Unblocks(options_.allow_source_column_rename, schema_version_);
  const bool drop_ok =
      changes.dropped.empty() || Unblocks(options_.allow_source_column_drop, schema_version_);
  if (rename_ok && drop_ok) return Status::OK();
  const std::string to = std::to_string(schema_version_);
  const std::string kind = changes.dropped.empty()   ? "RENAME COLUMN"
                           : changes.renamed.empty() ? "DROP COLUMN"
                                                     : "RENAME AND DROP COLUMN";
  std::string text =
      Description() +
      ": [DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION] We've detected one "
      "or more non-additive schema change(s) (" +
      kind + ") between Delta version " + std::to_string(previous.delta_commit_version) + " and " +
      to + " in the Delta streaming source. Changes:";
  if (!changes.renamed.empty()) {
    text += " columns renamed:";
    for (size_t i = 0; i < changes.renamed.size(); ++i) {
      text += std::string(i ? "," : "") + " '" + changes.renamed[i].first + "' -> '" +
              changes.renamed[i].second + "'";
    }
    text += ";";
  }
  if (!changes.dropped.empty()) {
    text += " columns dropped:";
    for (size_t i = 0; i < changes.dropped.size(); ++i) {
      text += std::string(i ? "," : "") + " '" + changes.dropped[i] + "'";
    }
    text += ";";
  }
  std::vector<std::string> options;
  if (!changes.renamed.empty()) options.push_back("allowSourceColumnRename");
  if (!changes.dropped.empty()) options.push_back("allowSourceColumnDrop");
  auto spelled = [&](const std::string& value) {
    std::string api, sql;
    for (const std::string& o : options) {
      api += ".option(\"" + o + "\", \"" + value + "\")";
      sql += std::string(sql.empty() ? "" : ", ") + o + " = '" + value + "'";
    }
    return api + " (SQL: FROM STREAM t WITH (" + sql + "))";
  };
  text +=
      " please check if you want to manually propagate the schema change(s) to the sink table "
      "before we proceed with stream processing using the finalized schema at version " +
      to +
      ". Once you have fixed the schema of the sink table or have decided there is no need to "
      "fix, you can set the following reader option(s) to unblock the non-additive schema "
      "change(s) and continue stream processing: to unblock for this particular stream just "
      "for this series of schema change(s): " +
      spelled(to) + "; to unblock for this particular stream: " + spelled("always") +
      ". (Spark's SQL confs spark.databricks.delta.streaming.allowSourceColumnRename / "
      "allowSourceColumnDrop / allowSourceColumnRenameAndDrop are not read by Sluice: use the "
      "reader options.)";
  return Status::InvalidArgument(text);
}

Status DeltaSource::MetadataEvolution(const SchemaLogEntry& entry) const {
  std::string schema_text = "(unreadable)";
  std::string additive;
  if (auto parsed = delta::ParseSchemaString(entry.data_schema_json); parsed.ok()) {
    schema_text = SchemaToText(parsed->fields);
    // Only columns added: the restart continues without an unblock (delta_source.h's tag).
    if (ReadCompatible(schema_, parsed->fields) && !delta::RenameOrDrop(table_schema_, *parsed)) {
      additive = std::string(" ") + kAdditiveSchemaChangeTag;
    }
  }
  std::string configurations;
  for (const auto& [k, v] : entry.table_configurations) {
    configurations += (configurations.empty() ? "" : ", ") + k + ":" + v;
  }
  return Status::InvalidArgument(
      Description() +
      ": [DELTA_STREAMING_METADATA_EVOLUTION] The schema, table configuration or protocol of "
      "your Delta table has changed during streaming. The schema or metadata tracking log has "
      "been updated. Please restart the stream to continue processing using the updated "
      "metadata. Updated schema: (" +
      schema_text + ") at version " + std::to_string(entry.delta_commit_version) +
      ". Updated table configurations: " + configurations + "." + additive);
}

}  // namespace sluice::sources
