#include "delta/table_writer.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "common/logging.h"
#include "common/strings.h"
#include "common/uuid.h"
#include "delta/log_segment.h"
#include "delta/paths.h"
#include "delta/schema.h"
#include "delta/schema_evolution.h"
#include "delta/snapshot_cache.h"
#include "delta/values.h"
#include "delta/write_util.h"

namespace sluice::delta {

namespace {

std::string JsonText(const std::string& s) { return nlohmann::json(s).dump(); }

std::string JsonArrayText(const std::vector<std::string>& v) { return nlohmann::json(v).dump(); }

// Engine types Delta tables written by Sluice may hold (timestamp_ntz needs a table feature).
Status CheckStorableSchema(const engine::Schema& schema) {
  std::function<Status(const std::string&, const engine::DataType&)> check =
      [&](const std::string& path, const engine::DataType& t) -> Status {
    if (t.id == engine::TypeId::kTimestamp) {
      return Status::NotSupported(
          "column '" + path +
          "' has type timestamp_ntz (TIMESTAMP without time zone), which needs the Delta "
          "table feature timestampNtz; use TIMESTAMPTZ");
    }
    for (const engine::Field& c : t.children)
      SLUICE_RETURN_NOT_OK(check(path + "." + c.name, c.type));
    return Status::OK();
  };
  for (const engine::Field& f : schema) {
    SLUICE_RETURN_NOT_OK(check(f.name, f.type));
    if (f.type.id == engine::TypeId::kNull) {
      return Status::InvalidArgument("column '" + f.name +
                                     "' has no type (an untyped NULL column)");
    }
  }
  return SchemaToJson(schema).status();
}

Status CheckNewTableConfiguration(const std::map<std::string, std::string>& configuration) {
  for (const auto& [k, v] : configuration) {
    std::string lv = v;
    for (char& c : lv) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (k == "delta.columnMapping.mode" && lv != "none") {
      return Status::NotSupported(
          "Sluice cannot write tables with column mapping (delta.columnMapping.mode=" + v + ")");
    }
    if (k == "delta.enableDeletionVectors" && lv == "true") {
      return Status::NotSupported(
          "Sluice cannot write tables with deletion vectors (delta.enableDeletionVectors)");
    }
    if (k.rfind("delta.constraints.", 0) == 0) {
      return Status::NotSupported("Sluice does not enforce CHECK constraints (" + k + ")");
    }
  }
  return Status::OK();
}

RemoveFile RemoveFor(const AddFile& a, int64_t now_ms) {
  RemoveFile r;
  r.path = a.path;
  r.deletion_timestamp = now_ms;
  r.data_change = true;
  r.extended_file_metadata = true;
  r.partition_values = a.partition_values;
  r.size = a.size;
  r.stats = a.stats;
  r.tags = a.tags;
  return r;
}

}  // namespace

Protocol ProtocolForNewTable(const std::map<std::string, std::string>& configuration) {
  Protocol p;
  p.min_reader_version = 1;
  p.min_writer_version = 2;
  auto it = configuration.find("delta.enableChangeDataFeed");
  if (it != configuration.end()) {
    std::string v = it->second;
    for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (v == "true") p.min_writer_version = 4;
  }
  return p;
}

namespace {

// The protocol a table at `current` needs once its metadata is `md`, when that is more than
// `current` (never a downgrade): a higher writer version for legacy protocols, or the
// changeDataFeed writer feature for table-features protocols (writer version 7).
std::optional<Protocol> ProtocolUpgradeFor(const Protocol& current, const Metadata& md) {
  Protocol needed = ProtocolForNewTable(md.configuration);
  Protocol upgraded = current;
  if (current.min_writer_version < 7) {
    if (needed.min_writer_version <= current.min_writer_version) return std::nullopt;
    upgraded.min_writer_version = needed.min_writer_version;
    return upgraded;
  }
  if (current.min_writer_version > 7 || !md.ConfigIsTrue("delta.enableChangeDataFeed")) {
    return std::nullopt;
  }
  auto features = upgraded.writer_features.value_or(std::vector<std::string>{});
  if (std::find(features.begin(), features.end(), "changeDataFeed") != features.end()) {
    return std::nullopt;
  }
  features.push_back("changeDataFeed");
  upgraded.writer_features = features;
  return upgraded;
}

}  // namespace

Status CheckWriteSupported(const Protocol& protocol, const Metadata& metadata) {
  if (protocol.min_writer_version > 7 || protocol.min_writer_version == 5 ||
      protocol.min_writer_version == 6) {
    return Status::NotSupported("Unsupported Delta protocol writer version " +
                                std::to_string(protocol.min_writer_version) +
                                " (Sluice writes versions 1-4 and 7)");
  }
  if (protocol.min_writer_version == 7) {
    static const std::set<std::string> kSupported = {"appendOnly", "invariants", "changeDataFeed"};
    for (const std::string& f : protocol.writer_features.value_or(std::vector<std::string>{})) {
      if (f == "deletionVectors") {  // read (scan.h), not written
        return Status::NotSupported(
            "Unsupported Delta writer feature 'deletionVectors': writes with deletion vectors are "
            "not supported yet");
      }
      if (!kSupported.count(f))
        return Status::NotSupported("Unsupported Delta writer feature '" + f + "'");
    }
  }
  for (const auto& [k, v] : metadata.configuration) {
    if (k.rfind("delta.constraints.", 0) == 0) {
      return Status::NotSupported("Sluice does not enforce CHECK constraints (" + k +
                                  "); refusing to write");
    }
  }
  for (const char* key :
       {"delta.generationExpression", "delta.identity.start", "delta.invariants"}) {
    if (metadata.schema_string.find(key) != std::string::npos) {
      return Status::NotSupported(std::string("Sluice does not enforce column metadata '") + key +
                                  "' (generated/identity columns, invariants); refusing to write");
    }
  }
  return Status::OK();
}

DeltaTableWriter::DeltaTableWriter(std::shared_ptr<fs::FileSystem> fs,
                                   std::unique_ptr<engine::Connection> conn, std::string path,
                                   TableWriterOptions options)
    : fs_(std::move(fs)),
      conn_(std::move(conn)),
      path_(std::move(path)),
      options_(std::move(options)) {}

Result<std::unique_ptr<DeltaTableWriter>> DeltaTableWriter::Open(std::shared_ptr<fs::FileSystem> fs,
                                                                 engine::Engine* engine,
                                                                 std::string path,
                                                                 TableWriterOptions options) {
  if (fs == nullptr || engine == nullptr) {
    return Status::InvalidArgument("DeltaTableWriter::Open needs a file system and an engine");
  }
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  SLUICE_ASSIGN_OR_RETURN_CTX(auto conn, engine->Connect(),
                              "opening Delta table " + path + " for writing");
  std::unique_ptr<engine::Connection> background_conn;
  if (options.background_checkpoints && options.write_checkpoints) {
    SLUICE_ASSIGN_OR_RETURN_CTX(background_conn, engine->Connect(),
                                "opening Delta table " + path + " for background checkpoints");
  }
  auto writer = std::unique_ptr<DeltaTableWriter>(
      new DeltaTableWriter(fs, std::move(conn), std::move(path), std::move(options)));
  if (background_conn) {
    DeltaTableWriter* w = writer.get();
    writer->background_ = std::make_unique<BackgroundPostCommit>(
        std::move(fs), std::move(background_conn), [w] { return w->Now(); });
  }
  return writer;
}

int64_t DeltaTableWriter::Now() const { return options_.now_ms ? options_.now_ms() : NowMillis(); }

Result<std::shared_ptr<const Snapshot>> DeltaTableWriter::Latest() {
  std::lock_guard<std::mutex> lock(mu_);
  return RefreshLocked();
}

Result<std::shared_ptr<const Snapshot>> DeltaTableWriter::RefreshLocked() {
  // A writer opened again in this process (a new statement) starts from the latest snapshot
  // seen of the table (snapshot_cache.h) instead of re-reading its checkpoint.
  if (!latest_) latest_ = LookupCachedSnapshot(fs_, path_);
  if (latest_) {
    // Probe for newer commits and apply them; no listing.
    LogReplay replay = LogReplay::FromSnapshot(*latest_);
    LogSegment segment = latest_->segment;
    Version v = latest_->version.Next();
    bool any = false;
    int64_t timestamp_ms = 0;
    for (;; v = v.Next()) {
      std::string path = CommitPath(path_, v);
      auto actions = ReadCommitActions(fs_.get(), path);
      if (!actions.ok()) {
        if (actions.status().IsNotFound()) break;
        return actions.status();
      }
      replay.Apply(std::move(*actions), v);
      LogFile f;
      f.info.path = path;
      if (auto info = fs_->Stat(path); info.ok()) f.info = *info;
      f.name.kind = LogFileKind::kCommit;
      f.name.version = v;
      timestamp_ms = f.info.mtime_ms > 0 ? f.info.mtime_ms : Now();
      segment.commits.push_back(f);
      any = true;
    }
    if (!any) return latest_;
    segment.version = v.Prev();
    SLUICE_ASSIGN_OR_RETURN(Snapshot snap, replay.Finish(path_, std::move(segment), timestamp_ms));
    latest_ = std::make_shared<Snapshot>(std::move(snap));
    CacheSnapshot(fs_, latest_);
    return latest_;
  }
  auto listing = ListLogForLatest(fs_.get(), path_);
  if (!listing.ok()) {
    if (listing.status().IsNotFound()) return std::shared_ptr<const Snapshot>();
    return listing.status();
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(LogSegment segment, BuildLogSegment(*listing, std::nullopt), path_);
  SLUICE_ASSIGN_OR_RETURN(latest_, LoadSnapshot(fs_.get(), conn_.get(), *listing, segment));
  CacheSnapshot(fs_, latest_);
  return latest_;
}

Result<Version> DeltaTableWriter::CreateTable(const engine::Schema& schema,
                                              const CreateTableOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string ctx = "creating Delta table " + path_;
  SLUICE_ASSIGN_OR_RETURN(auto snap, RefreshLocked());
  if (snap)
    return Status::AlreadyExists(ctx + ": the table already exists (version " +
                                 snap->version.ToString() + ")");
  SLUICE_RETURN_NOT_OK_CTX(CheckStorableSchema(schema), ctx);
  SLUICE_RETURN_NOT_OK_CTX(CheckNewTableConfiguration(options.configuration), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(auto parts,
                              ResolvePartitionColumns(schema, options.partition_columns), ctx);
  Metadata md;
  md.id = NewUuidV4();
  md.name = options.name;
  md.description = options.description;
  SLUICE_ASSIGN_OR_RETURN_CTX(md.schema_string, SchemaToJson(schema), ctx);
  md.partition_columns = parts;
  md.configuration = options.configuration;
  md.created_time = Now();
  Transaction txn(fs_, path_, nullptr, options_.commit);
  txn.Add(ProtocolForNewTable(options.configuration));
  txn.Add(md);
  txn.SetOperation(options.operation,
                   {{"isManaged", "\"false\""},
                    {"description", options.description ? JsonText(*options.description) : "null"},
                    {"partitionBy", JsonText(JsonArrayText(parts))},
                    {"properties", JsonText(nlohmann::json(options.configuration).dump())}});
  SLUICE_ASSIGN_OR_RETURN(CommitResult r, CommitLocked(&txn));
  return r.version;
}

Result<WriteResult> DeltaTableWriter::ReplaceTable(const engine::Schema& schema,
                                                   const engine::Batch* data,
                                                   const ReplaceTableOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string ctx = "replacing Delta table " + path_;
  SLUICE_ASSIGN_OR_RETURN_CTX(auto snap, RefreshLocked(), ctx);
  if (!snap) return Status::NotFound(ctx + ": the table does not exist");
  SLUICE_RETURN_NOT_OK_CTX(CheckWriteSupported(snap->protocol, snap->metadata), ctx);
  SLUICE_RETURN_NOT_OK_CTX(CheckStorableSchema(schema), ctx);
  SLUICE_RETURN_NOT_OK_CTX(CheckNewTableConfiguration(options.configuration), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(auto parts,
                              ResolvePartitionColumns(schema, options.partition_columns), ctx);
  Metadata md;
  md.id = snap->metadata.id;
  md.name = options.name;
  md.description = options.description;
  SLUICE_ASSIGN_OR_RETURN_CTX(md.schema_string, SchemaToJson(schema), ctx);
  md.partition_columns = parts;
  md.configuration = options.configuration;
  md.created_time = Now();
  if (md.configuration.count("delta.checkpointInterval")) {
    SLUICE_RETURN_NOT_OK_CTX(CheckpointInterval(md).status(), ctx);
  }

  WriteResult result;
  std::vector<AddFile> adds;
  if (data != nullptr) {
    SLUICE_ASSIGN_OR_RETURN_CTX(WriteSchemaPlan plan,
                                PlanWriteSchema(schema, data->schema(), false), ctx);
    SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch rows, ConformLocked(*data, plan), ctx);
    DataFileOptions file_options;
    file_options.compression = options_.compression;
    file_options.sync = options_.commit.sync;
    if (auto n = md.Config("delta.dataSkippingNumIndexedCols"))
      file_options.num_indexed_cols = std::atoi(n->c_str());
    SLUICE_ASSIGN_OR_RETURN(
        adds, WriteDataFiles(conn_.get(), fs_.get(), path_, rows, schema, parts, file_options));
    result.num_rows = rows.num_rows();
  }

  Transaction txn(fs_, path_, snap, options_.commit);
  for (const AddFile& a : adds) {
    auto storage = ResolveLogPath(path_, a.path);
    if (storage.ok()) txn.RecordWrittenFile(*storage);
  }
  // Never downgrade: keep the current protocol unless the new properties need more.
  if (auto upgraded = ProtocolUpgradeFor(snap->protocol, md)) txn.Add(*upgraded);
  txn.Add(md);
  txn.ReadWholeTable();
  const int64_t now = Now();
  for (const AddFile& f : snap->files) {
    txn.ReadFile(f.path);
    txn.Add(RemoveFor(f, now));
    ++result.num_removed_files;
  }
  for (const AddFile& a : adds) {
    result.num_bytes += a.size;
    txn.Add(a);
  }
  result.num_files = static_cast<int64_t>(adds.size());
  txn.SetOperation(options.operation,
                   {{"isManaged", "\"false\""},
                    {"description", options.description ? JsonText(*options.description) : "null"},
                    {"partitionBy", JsonText(JsonArrayText(parts))},
                    {"properties", JsonText(nlohmann::json(options.configuration).dump())}});
  txn.AddMetric("numFiles", result.num_files);
  txn.AddMetric("numOutputRows", result.num_rows);
  txn.AddMetric("numOutputBytes", result.num_bytes);
  txn.AddMetric("numRemovedFiles", result.num_removed_files);
  SLUICE_ASSIGN_OR_RETURN(CommitResult committed, CommitLocked(&txn));
  result.version = committed.version;
  result.attempts = committed.attempts;
  return result;
}

Result<WriteResult> DeltaTableWriter::Write(const engine::Batch& data,
                                            const WriteOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  return WriteLocked(data, options);
}

Result<WriteResult> DeltaTableWriter::WriteLocked(const engine::Batch& data,
                                                  const WriteOptions& options) {
  const std::string ctx = "writing to Delta table " + path_;
  WriteResult result;
  if (options.txn_app_id.has_value() != options.txn_version.has_value()) {
    return Status::InvalidArgument(ctx + ": txn_app_id and txn_version must be given together");
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(auto snap, RefreshLocked(), ctx);
  if (snap && options.txn_app_id) {
    auto recorded = snap->TxnVersion(*options.txn_app_id);
    if (recorded && *recorded >= *options.txn_version) {
      result.skipped = true;
      return result;
    }
  }
  if (snap && options.mode == SaveMode::kErrorIfExists) {
    return Status::AlreadyExists(ctx + ": the table already exists (version " +
                                 snap->version.ToString() + ")");
  }

  // The table schema and partitioning this write uses.
  engine::Schema table_schema;
  std::vector<std::string> partition_columns;
  Metadata metadata;
  bool new_table = snap == nullptr;
  if (new_table) {
    SLUICE_RETURN_NOT_OK_CTX(CheckStorableSchema(data.schema()), ctx);
    SLUICE_RETURN_NOT_OK_CTX(CheckNewTableConfiguration(options.configuration), ctx);
    table_schema = data.schema();
    SLUICE_ASSIGN_OR_RETURN_CTX(partition_columns,
                                ResolvePartitionColumns(table_schema, options.partition_by), ctx);
    metadata.id = NewUuidV4();
    metadata.partition_columns = partition_columns;
    metadata.configuration = options.configuration;
    metadata.created_time = Now();
  } else {
    SLUICE_RETURN_NOT_OK_CTX(CheckWriteSupported(snap->protocol, snap->metadata), ctx);
    metadata = snap->metadata;
    table_schema = snap->schema.fields;
    partition_columns = snap->metadata.partition_columns;
    if (!options.partition_by.empty()) {
      SLUICE_ASSIGN_OR_RETURN_CTX(auto wanted,
                                  ResolvePartitionColumns(table_schema, options.partition_by), ctx);
      if (wanted != partition_columns) {
        return Status::InvalidArgument(
            ctx + ": partition columns " + JsonArrayText(options.partition_by) +
            " do not match the table's " + JsonArrayText(partition_columns));
      }
    }
    if (options.mode == SaveMode::kOverwrite && snap->metadata.ConfigIsTrue("delta.appendOnly")) {
      return Status::InvalidArgument(
          ctx + ": the table is append-only (delta.appendOnly=true); overwrite refused");
    }
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(WriteSchemaPlan plan,
                              PlanWriteSchema(table_schema, data.schema(), options.merge_schema),
                              ctx);
  if (plan.schema_changed) SLUICE_RETURN_NOT_OK_CTX(CheckStorableSchema(plan.table_schema), ctx);
  FieldMetadata field_metadata = snap ? snap->schema.metadata : FieldMetadata{};
  SLUICE_ASSIGN_OR_RETURN_CTX(metadata.schema_string,
                              SchemaToJson(plan.table_schema, field_metadata), ctx);

  // NOT NULL checks and the projection to the table schema, before any file is written.
  SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch rows, ConformLocked(data, plan), ctx);

  DataFileOptions file_options;
  file_options.compression = options_.compression;
  file_options.sync = options_.commit.sync;
  file_options.max_rows_per_file = options.max_rows_per_file;
  // The data files' fsyncs run in the background while the commit file is written and synced;
  // the commit waits for them before it is published (Transaction::SetBeforePublish).
  DataFileSync data_sync;
  file_options.background_sync = &data_sync;
  if (auto n = metadata.Config("delta.dataSkippingNumIndexedCols"))
    file_options.num_indexed_cols = std::atoi(n->c_str());
  SLUICE_ASSIGN_OR_RETURN(std::vector<AddFile> adds,
                          WriteDataFiles(conn_.get(), fs_.get(), path_, rows, plan.table_schema,
                                         partition_columns, file_options));

  Transaction txn(fs_, path_, snap, options_.commit);
  txn.SetBeforePublish([&data_sync] { return data_sync.Wait(); });
  for (const AddFile& a : adds) {
    auto storage = ResolveLogPath(path_, a.path);
    if (storage.ok()) txn.RecordWrittenFile(*storage);
  }
  if (new_table) txn.Add(ProtocolForNewTable(options.configuration));
  if (new_table || plan.schema_changed) txn.Add(metadata);
  const int64_t now = Now();
  if (options.txn_app_id) txn.Add(SetTransaction{*options.txn_app_id, *options.txn_version, now});
  if (snap && options.mode == SaveMode::kOverwrite) {
    txn.ReadWholeTable();
    for (const AddFile& f : snap->files) {
      txn.ReadFile(f.path);
      txn.Add(RemoveFor(f, now));
      ++result.num_removed_files;
    }
  }
  for (const AddFile& a : adds) {
    result.num_bytes += a.size;
    txn.Add(a);
  }
  result.num_rows = rows.num_rows();
  result.num_files = static_cast<int64_t>(adds.size());
  std::map<std::string, std::string> params;
  if (options.operation == "WRITE") {
    params["mode"] = JsonText(options.mode == SaveMode::kOverwrite ? "Overwrite"
                              : options.mode == SaveMode::kAppend  ? "Append"
                                                                   : "ErrorIfExists");
    params["partitionBy"] = JsonText(JsonArrayText(partition_columns));
  }
  for (const auto& [k, v] : options.operation_parameters) params[k] = JsonText(v);
  txn.SetOperation(options.operation, params);
  txn.AddMetric("numFiles", result.num_files);
  txn.AddMetric("numOutputRows", result.num_rows);
  txn.AddMetric("numOutputBytes", result.num_bytes);
  if (result.num_removed_files > 0) txn.AddMetric("numRemovedFiles", result.num_removed_files);
  SLUICE_ASSIGN_OR_RETURN(CommitResult committed, CommitLocked(&txn));
  result.version = committed.version;
  result.attempts = committed.attempts;
  return result;
}

Result<engine::Batch> DeltaTableWriter::ConformLocked(const engine::Batch& data,
                                                      const WriteSchemaPlan& plan) {
  if (plan.not_null_columns.empty() && plan.identity) return data;
  engine::Batch rows = data;
  const std::string view = "__sluice_delta_in_" + NewUuidV4().substr(0, 8);
  SLUICE_RETURN_NOT_OK(conn_->RegisterBatch(view, data));
  struct Unregister {
    engine::Connection* c;
    std::string v;
    ~Unregister() { (void)c->UnregisterBatch(v); }
  } unregister{conn_.get(), view};
  if (!plan.not_null_columns.empty()) {
    std::string sql = "SELECT ";
    for (size_t i = 0; i < plan.not_null_columns.size(); ++i) {
      if (i > 0) sql += ", ";
      sql += "count(*) FILTER (WHERE " + QuoteIdentifier(plan.not_null_columns[i]) + " IS NULL)";
    }
    SLUICE_ASSIGN_OR_RETURN(engine::Batch counts,
                            conn_->Query(sql + " FROM " + QuoteIdentifier(view)));
    for (size_t i = 0; i < plan.not_null_columns.size(); ++i) {
      SLUICE_ASSIGN_OR_RETURN(auto n, counts.GetInt64(0, i));
      if (n.value_or(0) > 0) {
        return Status::InvalidArgument("NOT NULL constraint violated for column '" +
                                       plan.not_null_columns[i] + "': " + std::to_string(*n) +
                                       " null value(s); nothing was written");
      }
    }
  }
  if (!plan.identity) {
    std::string sql = "SELECT ";
    for (size_t i = 0; i < plan.projection.size(); ++i)
      sql += (i > 0 ? ", " : "") + plan.projection[i];
    SLUICE_ASSIGN_OR_RETURN(rows, conn_->Query(sql + " FROM " + QuoteIdentifier(view)));
  }
  return rows;
}

Result<Version> DeltaTableWriter::AddColumns(const std::vector<engine::Field>& columns) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string ctx = "ALTER TABLE ADD COLUMNS on Delta table " + path_;
  SLUICE_ASSIGN_OR_RETURN(auto snap, RefreshLocked());
  if (!snap) return Status::NotFound(ctx + ": no Delta table at " + path_);
  SLUICE_RETURN_NOT_OK_CTX(CheckWriteSupported(snap->protocol, snap->metadata), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(engine::Schema schema,
                              delta::AddColumns(snap->schema.fields, columns), ctx);
  SLUICE_RETURN_NOT_OK_CTX(CheckStorableSchema(schema), ctx);
  Metadata md = snap->metadata;
  SLUICE_ASSIGN_OR_RETURN_CTX(md.schema_string, SchemaToJson(schema, snap->schema.metadata), ctx);
  Transaction txn(fs_, path_, snap, options_.commit);
  txn.Add(md);
  nlohmann::json cols = nlohmann::json::array();
  for (const engine::Field& f : columns) {
    cols.push_back(
        {{"column", {{"name", f.name}, {"type", DeltaTypeName(f.type)}, {"nullable", true}}}});
  }
  txn.SetOperation("ADD COLUMNS", {{"columns", JsonText(cols.dump())}});
  SLUICE_ASSIGN_OR_RETURN(CommitResult r, CommitLocked(&txn));
  return r.version;
}

Result<Version> DeltaTableWriter::SetProperties(
    const std::map<std::string, std::string>& properties) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string ctx = "ALTER TABLE SET TBLPROPERTIES on Delta table " + path_;
  SLUICE_ASSIGN_OR_RETURN(auto snap, RefreshLocked());
  if (!snap) return Status::NotFound(ctx + ": no Delta table at " + path_);
  SLUICE_RETURN_NOT_OK_CTX(CheckWriteSupported(snap->protocol, snap->metadata), ctx);
  SLUICE_RETURN_NOT_OK_CTX(CheckNewTableConfiguration(properties), ctx);
  Metadata md = snap->metadata;
  for (const auto& [k, v] : properties) md.configuration[k] = v;
  if (md.configuration.count("delta.checkpointInterval")) {
    SLUICE_RETURN_NOT_OK_CTX(CheckpointInterval(md).status(), ctx);
  }
  Transaction txn(fs_, path_, snap, options_.commit);
  if (auto upgraded = ProtocolUpgradeFor(snap->protocol, md)) txn.Add(*upgraded);
  txn.Add(md);
  txn.SetOperation("SET TBLPROPERTIES",
                   {{"properties", JsonText(nlohmann::json(properties).dump())}});
  SLUICE_ASSIGN_OR_RETURN(CommitResult r, CommitLocked(&txn));
  return r.version;
}

Result<std::unique_ptr<Transaction>> DeltaTableWriter::StartTransaction() {
  std::lock_guard<std::mutex> lock(mu_);
  SLUICE_ASSIGN_OR_RETURN(auto snap, RefreshLocked());
  if (!snap) return Status::NotFound("no Delta table at " + path_);
  SLUICE_RETURN_NOT_OK_CTX(CheckWriteSupported(snap->protocol, snap->metadata), path_);
  return std::make_unique<Transaction>(fs_, path_, snap, options_.commit);
}

Result<std::vector<AddFile>> DeltaTableWriter::WriteFiles(Transaction* txn,
                                                          const engine::Batch& data) {
  std::lock_guard<std::mutex> lock(mu_);
  const Snapshot* snap = txn->read_snapshot().get();
  if (snap == nullptr)
    return Status::InvalidArgument("WriteFiles needs a transaction on an existing table");
  const std::string ctx = "writing data files for a transaction on Delta table " + path_;
  SLUICE_ASSIGN_OR_RETURN_CTX(WriteSchemaPlan plan,
                              PlanWriteSchema(snap->schema.fields, data.schema(), false), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch rows, ConformLocked(data, plan), ctx);
  DataFileOptions file_options;
  file_options.compression = options_.compression;
  file_options.sync = options_.commit.sync;
  if (auto n = snap->metadata.Config("delta.dataSkippingNumIndexedCols")) {
    file_options.num_indexed_cols = std::atoi(n->c_str());
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<AddFile> adds,
                          WriteDataFiles(conn_.get(), fs_.get(), path_, rows, snap->schema.fields,
                                         snap->metadata.partition_columns, file_options));
  for (const AddFile& a : adds) {
    auto storage = ResolveLogPath(path_, a.path);
    if (storage.ok()) txn->RecordWrittenFile(*storage);
  }
  return adds;
}

Result<CommitResult> DeltaTableWriter::Commit(Transaction* txn) {
  std::lock_guard<std::mutex> lock(mu_);
  return CommitLocked(txn);
}

Result<CommitResult> DeltaTableWriter::CommitLocked(Transaction* txn) {
  auto result = txn->Commit();
  if (!result.ok()) {
    if (result.status().IsConflict()) {
      // Never committed: the files this transaction wrote are garbage. Only those: its add
      // actions may name files that live in the table (RESTORE re-adds old files).
      for (const std::string& p : txn->written_files()) (void)fs_->DeleteFile(p);
    }
    return result.status();
  }
  latest_ = result->snapshot;
  if (latest_) {
    CacheSnapshot(fs_, latest_);
  } else {
    auto reread = RefreshLocked();
    if (reread.ok()) result->snapshot = *reread;
  }
  PostCommitLocked(*result);
  return result;
}

void DeltaTableWriter::PostCommitLocked(const CommitResult& result) {
  if (!options_.write_checkpoints || !result.snapshot) return;
  if (!NeedsCheckpoint(*result.snapshot)) return;
  if (background_) {
    background_->Submit(result.snapshot);  // an immutable snapshot of exactly this version
    return;
  }
  RunPostCommit(conn_.get(), fs_.get(), *result.snapshot, Now());
}

Result<CheckpointInfo> DeltaTableWriter::Checkpoint() {
  std::lock_guard<std::mutex> lock(mu_);
  if (background_) background_->Drain();
  SLUICE_ASSIGN_OR_RETURN(auto snap, RefreshLocked());
  if (!snap) return Status::NotFound("no Delta table at " + path_);
  return WriteCheckpoint(conn_.get(), fs_.get(), *snap, Now());
}

Result<CleanupResult> DeltaTableWriter::CleanupLogs() {
  std::lock_guard<std::mutex> lock(mu_);
  if (background_) background_->Drain();
  SLUICE_ASSIGN_OR_RETURN(auto snap, RefreshLocked());
  if (!snap) return Status::NotFound("no Delta table at " + path_);
  SLUICE_ASSIGN_OR_RETURN(int64_t retention, LogRetentionMs(snap->metadata));
  return CleanupExpiredLogs(fs_.get(), path_, retention, Now());
}

}  // namespace sluice::delta
