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
#include "delta/column_mapping.h"
#include "delta/column_mapping_write.h"
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

// True when the table's protocol has the writer feature timestampNtz (Spark's tables with a
// TIMESTAMP_NTZ column: reader 3 / writer 7 with timestampNtz in both lists).
bool HasTimestampNtz(const Protocol& protocol) {
  const auto& wf = protocol.writer_features;
  return wf && std::find(wf->begin(), wf->end(), "timestampNtz") != wf->end();
}

// Engine types Delta tables written by Sluice may hold: timestamp_ntz (TIMESTAMP) only in a
// table whose protocol has the timestampNtz feature (`ntz_ok`); Sluice does not add the feature.
Status CheckStorableSchema(const engine::Schema& schema, bool ntz_ok = false) {
  std::function<Status(const std::string&, const engine::DataType&)> check =
      [&](const std::string& path, const engine::DataType& t) -> Status {
    if (t.id == engine::TypeId::kTimestamp && !ntz_ok) {
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
    if (k == "delta.columnMapping.mode" && lv != "none" && lv != "name" && lv != "id") {
      return Status::NotSupported("Unsupported column mapping mode '" + v +
                                  "' (delta.columnMapping.mode is none, name or id)");
    }
    if (k.rfind("delta.constraints.", 0) == 0) {
      return Status::NotSupported("Sluice does not enforce CHECK constraints (" + k + ")");
    }
  }
  return Status::OK();
}

// Delta's protocol properties in TBLPROPERTIES (delta.minReaderVersion, delta.minWriterVersion,
// delta.feature.<name> = 'supported'): Delta reads them as a request for the table's protocol and
// keeps them out of the configuration. RequestedProtocol (below) makes the protocol they ask
// for; here they are dropped from `configuration`.
void TakeProtocolProperties(std::map<std::string, std::string>* configuration) {
  for (auto it = configuration->begin(); it != configuration->end();) {
    const std::string& k = it->first;
    if (k == "delta.minReaderVersion" || k == "delta.minWriterVersion" ||
        k.rfind("delta.feature.", 0) == 0) {
      it = configuration->erase(it);
    } else {
      ++it;
    }
  }
}

// Column mapping mode name or id: gives every field of `schema` without a physical name one (and
// an id), and rewrites md->schema_string with the field metadata. Mode none: nothing.
Status MapNewFields(const engine::Schema& schema, Metadata* md, FieldMetadata* field_metadata,
                    bool keep_names = false) {
  SLUICE_ASSIGN_OR_RETURN(ColumnMappingMode mode, ColumnMappingModeOf(*md));
  if (mode == ColumnMappingMode::kNone) return Status::OK();
  SLUICE_RETURN_NOT_OK(AssignColumnMapping(schema, keep_names, field_metadata, &md->configuration));
  SLUICE_ASSIGN_OR_RETURN(md->schema_string, SchemaToJson(schema, *field_metadata));
  return Status::OK();
}

// WriteDataFiles for the table's rows (logical columns): under column mapping the files, their
// stats and partition values get the physical names (column_mapping_write.h).
Result<std::vector<AddFile>> WriteTableFiles(engine::Connection* conn, fs::FileSystem* fs,
                                             const std::string& path, const engine::Batch& rows,
                                             const engine::Schema& schema,
                                             const FieldMetadata& field_metadata,
                                             const Metadata& md, const DataFileOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(ColumnMappingMode mode, ColumnMappingModeOf(md));
  if (mode == ColumnMappingMode::kNone) {
    return WriteDataFiles(conn, fs, path, rows, schema, md.partition_columns, options);
  }
  SLUICE_ASSIGN_OR_RETURN(PhysicalRows physical,
                          ToPhysicalRows(conn, rows, DeltaSchema{schema, field_metadata}, md));
  DataFileOptions with_ids = options;
  with_ids.field_ids = std::move(physical.field_ids);
  return WriteDataFiles(conn, fs, path, physical.rows, physical.schema, physical.partition_columns,
                        with_ids);
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
  r.deletion_vector = a.deletion_vector;  // the entry removed is (path, DV)
  r.base_row_id = a.base_row_id;
  r.default_row_commit_version = a.default_row_commit_version;
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
  // Column mapping: reader 2 / writer 5, as Delta's legacy protocol for it.
  it = configuration.find("delta.columnMapping.mode");
  const bool column_mapping =
      it != configuration.end() &&
      (AsciiEqualsIgnoreCase(it->second, "name") || AsciiEqualsIgnoreCase(it->second, "id"));
  if (column_mapping) {
    p.min_reader_version = 2;
    p.min_writer_version = 5;
  }
  // Deletion vectors need table features (reader 3 / writer 7), listed as Spark lists them.
  it = configuration.find("delta.enableDeletionVectors");
  if (it != configuration.end() && AsciiEqualsIgnoreCase(it->second, "true")) {
    const bool cdf = p.min_writer_version == 4;
    p.min_reader_version = 3;
    p.min_writer_version = 7;
    p.reader_features = std::vector<std::string>{"deletionVectors"};
    p.writer_features = std::vector<std::string>{"deletionVectors"};
    if (column_mapping) {
      p.reader_features->push_back("columnMapping");
      p.writer_features->push_back("columnMapping");
    }
    if (cdf) p.writer_features->push_back("changeDataFeed");
    p.writer_features->push_back("invariants");
    p.writer_features->push_back("appendOnly");
  }
  return p;
}

namespace {

// The legacy features (Delta's names, with the protocol versions that imply them) Sluice writes.
struct LegacyFeature {
  const char* name;
  int32_t reader;
  int32_t writer;
};
constexpr LegacyFeature kLegacyFeatures[] = {{"invariants", 1, 2},       {"appendOnly", 1, 2},
                                             {"checkConstraints", 1, 3}, {"changeDataFeed", 1, 4},
                                             {"generatedColumns", 1, 4}, {"columnMapping", 2, 5},
                                             {"identityColumns", 1, 6}};
// The table features Sluice writes: the legacy ones and deletionVectors.
bool WritableFeature(const std::string& f) {
  if (f == "deletionVectors") return true;
  for (const LegacyFeature& l : kLegacyFeatures) {
    if (f == l.name) return true;
  }
  return false;
}
bool ReaderWriterFeature(const std::string& f) {
  return f == "columnMapping" || f == "deletionVectors";
}

// The features a legacy protocol (reader <= 2, writer <= 6) implies: those whose versions it has.
std::vector<std::string> LegacyFeaturesOf(int32_t reader, int32_t writer) {
  std::vector<std::string> out;
  for (const LegacyFeature& l : kLegacyFeatures) {
    if (l.reader <= reader && l.writer <= writer) out.push_back(l.name);
  }
  return out;
}

std::vector<std::string> FeaturesOf(const Protocol& p) {
  if (p.min_writer_version < 7) return LegacyFeaturesOf(p.min_reader_version, p.min_writer_version);
  std::vector<std::string> out = p.writer_features.value_or(std::vector<std::string>{});
  for (const std::string& f : p.reader_features.value_or(std::vector<std::string>{})) {
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  return out;
}

// Delta's normalized protocol of a feature set: the smallest legacy protocol implying exactly
// those features, else table features (reader 3 with reader features for deletion vectors;
// reader 2 and no reader list when column mapping is the only reader feature), as Delta 4.4
// writes them (asked: docs/differences.md "Catalog statements").
Protocol NormalizedProtocol(const std::vector<std::string>& features) {
  const std::set<std::string> wanted(features.begin(), features.end());
  for (int32_t w = 1; w <= 6; ++w) {
    for (int32_t r = 1; r <= 2; ++r) {
      const std::vector<std::string> implied = LegacyFeaturesOf(r, w);
      if (std::set<std::string>(implied.begin(), implied.end()) == wanted) {
        Protocol p;
        p.min_reader_version = r;
        p.min_writer_version = w;
        return p;
      }
    }
  }
  Protocol p;
  p.min_writer_version = 7;
  p.writer_features = features;
  std::vector<std::string> reader;
  for (const std::string& f : features) {
    if (ReaderWriterFeature(f)) reader.push_back(f);
  }
  if (reader.empty() || (reader.size() == 1 && reader[0] == "columnMapping")) {
    p.min_reader_version = reader.empty() ? 1 : 2;
  } else {
    p.min_reader_version = 3;
    p.reader_features = reader;
  }
  return p;
}

// When `configuration` asks for a protocol (delta.minReaderVersion / delta.minWriterVersion /
// delta.feature.<name>), the protocol Delta makes of the request, the table's current protocol
// (`current`, null for a new table) and the features its properties need, normalized; nullopt
// when nothing asks. Versions above Delta's (3 / 7), a feature Sluice does not write and writer
// version 6 (identity columns) are refused, naming the property.
Result<std::optional<Protocol>> RequestedProtocol(
    const Protocol* current, const std::map<std::string, std::string>& configuration) {
  std::optional<int32_t> reader, writer;
  std::vector<std::string> asked_features;
  for (const auto& [k, v] : configuration) {
    const bool is_reader = k == "delta.minReaderVersion";
    if (is_reader || k == "delta.minWriterVersion") {
      char* end = nullptr;
      const long asked = std::strtol(v.c_str(), &end, 10);
      const long max = is_reader ? 3 : 7;
      if (v.empty() || end == nullptr || *end != '\0' || asked < 1 || asked > max) {
        return Status::InvalidArgument(k + " = '" + v + "': expected a protocol version (1 to " +
                                       std::to_string(max) + ")");
      }
      (is_reader ? reader : writer) = static_cast<int32_t>(asked);
    } else if (k.rfind("delta.feature.", 0) == 0) {
      const std::string feature = k.substr(std::string("delta.feature.").size());
      if (!AsciiEqualsIgnoreCase(v, "supported") && !AsciiEqualsIgnoreCase(v, "enabled")) {
        return Status::InvalidArgument(k + " = '" + v +
                                       "': a feature property's value is 'supported'");
      }
      if (!WritableFeature(feature)) {
        return Status::NotSupported(k + ": Sluice does not write the table feature '" + feature +
                                    "'");
      }
      asked_features.push_back(feature);
    }
  }
  if (!reader && !writer && asked_features.empty()) return std::optional<Protocol>();
  // The request's own features first, then those the properties need, then what the asked
  // versions (or, for a new table asking only features, Delta's default 1/2) and the current
  // protocol imply.
  std::vector<std::string> features;
  auto add = [&features](const std::string& f) {
    if (std::find(features.begin(), features.end(), f) == features.end()) features.push_back(f);
  };
  const bool table_features = current != nullptr && current->min_writer_version == 7;
  if (table_features) {
    for (const std::string& f : FeaturesOf(*current)) add(f);
  }
  for (const std::string& f : asked_features) add(f);
  auto enabled = [&configuration](const char* key) {
    auto it = configuration.find(key);
    return it != configuration.end() && AsciiEqualsIgnoreCase(it->second, "true");
  };
  if (enabled("delta.enableDeletionVectors")) add("deletionVectors");
  auto mode = configuration.find("delta.columnMapping.mode");
  if (mode != configuration.end() &&
      (AsciiEqualsIgnoreCase(mode->second, "name") || AsciiEqualsIgnoreCase(mode->second, "id"))) {
    add("columnMapping");
  }
  if (enabled("delta.enableChangeDataFeed")) add("changeDataFeed");
  if (enabled("delta.appendOnly")) add("appendOnly");
  const int32_t w = writer.value_or(current ? 1 : 2);  // Delta's default for a new table: 1/2
  if (w < 7) {
    for (const std::string& f : LegacyFeaturesOf(reader.value_or(1), w)) add(f);
  }
  if (current != nullptr && !table_features) {
    for (const std::string& f : FeaturesOf(*current)) add(f);
  }
  Protocol p = NormalizedProtocol(features);
  if (p.min_writer_version == 6) {
    return Status::NotSupported(
        "delta.minWriterVersion = 6: Sluice does not write protocol writer version 6 (identity "
        "columns)");
  }
  return std::optional<Protocol>(p);
}

// A new table's protocol: the one its TBLPROPERTIES ask for, else the one they need.
Result<Protocol> NewTableProtocol(const std::map<std::string, std::string>& configuration) {
  SLUICE_ASSIGN_OR_RETURN(std::optional<Protocol> asked, RequestedProtocol(nullptr, configuration));
  return asked ? *asked : ProtocolForNewTable(configuration);
}

std::optional<Protocol> ProtocolUpgradeFor(const Protocol& current, const Metadata& md);

// The protocol an existing table at `current` moves to once its metadata is `md` (never a
// downgrade), nullopt when it stays: the one its properties ask for (RequestedProtocol), else
// ProtocolUpgradeFor's.
Result<std::optional<Protocol>> ProtocolChangeFor(const Protocol& current, const Metadata& md) {
  SLUICE_ASSIGN_OR_RETURN(std::optional<Protocol> asked,
                          RequestedProtocol(&current, md.configuration));
  if (!asked) return ProtocolUpgradeFor(current, md);
  const std::vector<std::string> had = FeaturesOf(current);
  const std::vector<std::string> now = FeaturesOf(*asked);
  if (std::set<std::string>(had.begin(), had.end()) ==
      std::set<std::string>(now.begin(), now.end()))
    return std::optional<Protocol>();
  return asked;
}

// The protocol a table at `current` needs once its metadata is `md`, when that is more than
// `current` (never a downgrade): a higher writer version for legacy protocols, table features
// (reader 3 / writer 7) when deletion vectors are enabled, or the changeDataFeed,
// deletionVectors and columnMapping features for table-features protocols (writer version 7).
std::optional<Protocol> ProtocolUpgradeFor(const Protocol& current, const Metadata& md) {
  Protocol needed = ProtocolForNewTable(md.configuration);
  Protocol upgraded = current;
  if (current.min_writer_version < 7 && needed.min_writer_version == 7) {
    // A legacy protocol becomes table features: the features its versions imply (Delta's
    // legacy feature list), then the ones the metadata needs.
    std::vector<std::string> writer = {"appendOnly", "invariants"};
    const int wv = current.min_writer_version;
    if (wv >= 3) writer.push_back("checkConstraints");
    if (wv >= 4) writer.insert(writer.end(), {"changeDataFeed", "generatedColumns"});
    if (wv >= 5) writer.push_back("columnMapping");
    std::vector<std::string> reader;
    if (current.min_reader_version >= 2) reader.push_back("columnMapping");
    auto merge = [](std::vector<std::string>* into, const std::vector<std::string>& more) {
      for (const std::string& f : more) {
        if (std::find(into->begin(), into->end(), f) == into->end()) into->push_back(f);
      }
    };
    merge(&writer, needed.writer_features.value_or(std::vector<std::string>{}));
    merge(&reader, needed.reader_features.value_or(std::vector<std::string>{}));
    upgraded.min_reader_version = 3;
    upgraded.min_writer_version = 7;
    upgraded.reader_features = reader;
    upgraded.writer_features = writer;
    return upgraded;
  }
  if (current.min_writer_version < 7) {
    if (needed.min_writer_version <= current.min_writer_version &&
        needed.min_reader_version <= current.min_reader_version) {
      return std::nullopt;
    }
    upgraded.min_writer_version = std::max(current.min_writer_version, needed.min_writer_version);
    upgraded.min_reader_version = std::max(current.min_reader_version, needed.min_reader_version);
    return upgraded;
  }
  if (current.min_writer_version > 7) return std::nullopt;
  bool changed = false;
  auto add_feature = [&changed](std::optional<std::vector<std::string>>* list,
                                const std::string& f) {
    auto features = list->value_or(std::vector<std::string>{});
    if (std::find(features.begin(), features.end(), f) != features.end()) return;
    features.push_back(f);
    *list = features;
    changed = true;
  };
  if (md.ConfigIsTrue("delta.enableChangeDataFeed")) {
    add_feature(&upgraded.writer_features, "changeDataFeed");
  }
  if (md.ConfigIsTrue("delta.enableDeletionVectors")) {
    add_feature(&upgraded.writer_features, "deletionVectors");
    if (upgraded.min_reader_version < 3) {
      // Reader features need reader 3; a reader-2 table had column mapping implicitly.
      std::vector<std::string> reader;
      if (upgraded.min_reader_version == 2) reader.push_back("columnMapping");
      upgraded.reader_features = reader;
      upgraded.min_reader_version = 3;
      changed = true;
    }
    add_feature(&upgraded.reader_features, "deletionVectors");
  }
  auto mode = ColumnMappingModeOf(md);
  if (mode.ok() && *mode != ColumnMappingMode::kNone) {
    add_feature(&upgraded.writer_features, "columnMapping");
    if (upgraded.min_reader_version == 3) {
      add_feature(&upgraded.reader_features, "columnMapping");
    } else if (upgraded.min_reader_version < 2) {
      upgraded.min_reader_version = 2;
      changed = true;
    }
  }
  if (!changed) return std::nullopt;
  return upgraded;
}

}  // namespace

Status CheckWriteSupported(const Protocol& protocol, const Metadata& metadata) {
  // Column mapping: modes name and id are written under physical names with Parquet field ids
  // (column_mapping_write.h); any other mode is refused naming it.
  SLUICE_RETURN_NOT_OK(ColumnMappingModeOf(metadata).status());
  if (protocol.min_writer_version > 7 || protocol.min_writer_version == 6) {
    return Status::NotSupported("Unsupported Delta protocol writer version " +
                                std::to_string(protocol.min_writer_version) +
                                " (Sluice writes versions 1-5 and 7)");
  }
  if (protocol.min_writer_version == 7) {
    // checkConstraints, generatedColumns and identityColumns (implied by legacy writer versions
    // 3-6 when such a table moves to table features) are safe while the table has no
    // constraint, generated or identity column, which the checks below refuse.
    static const std::set<std::string> kSupported = {
        "appendOnly",      "invariants",       "changeDataFeed",      "columnMapping",
        "deletionVectors", "checkConstraints", "generatedColumns",    "identityColumns",
        "timestampNtz",    "typeWidening",     "typeWidening-preview"};
    for (const std::string& f : protocol.writer_features.value_or(std::vector<std::string>{})) {
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
  FieldMetadata field_metadata = options.field_metadata;
  SLUICE_ASSIGN_OR_RETURN_CTX(md.schema_string, SchemaToJson(schema, field_metadata), ctx);
  md.partition_columns = parts;
  md.configuration = options.configuration;
  md.created_time = Now();
  SLUICE_ASSIGN_OR_RETURN_CTX(const Protocol protocol, NewTableProtocol(options.configuration),
                              ctx);
  TakeProtocolProperties(&md.configuration);
  SLUICE_RETURN_NOT_OK_CTX(MapNewFields(schema, &md, &field_metadata), ctx);
  Transaction txn(fs_, path_, nullptr, options_.commit);
  txn.Add(protocol);
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
  SLUICE_RETURN_NOT_OK_CTX(CheckStorableSchema(schema), ctx);  // REPLACE makes a new protocol
  SLUICE_RETURN_NOT_OK_CTX(CheckNewTableConfiguration(options.configuration), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(auto parts,
                              ResolvePartitionColumns(schema, options.partition_columns), ctx);
  Metadata md;
  md.id = snap->metadata.id;
  md.name = options.name;
  md.description = options.description;
  FieldMetadata field_metadata = options.field_metadata;
  SLUICE_ASSIGN_OR_RETURN_CTX(md.schema_string, SchemaToJson(schema, field_metadata), ctx);
  md.partition_columns = parts;
  md.configuration = options.configuration;
  md.created_time = Now();
  if (md.configuration.count("delta.checkpointInterval")) {
    SLUICE_RETURN_NOT_OK_CTX(CheckpointInterval(md).status(), ctx);
  }
  // Never downgrade: keep the current protocol unless the new properties need more.
  SLUICE_ASSIGN_OR_RETURN_CTX(const std::optional<Protocol> upgraded,
                              ProtocolChangeFor(snap->protocol, md), ctx);
  TakeProtocolProperties(&md.configuration);
  SLUICE_RETURN_NOT_OK_CTX(MapNewFields(schema, &md, &field_metadata), ctx);

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
    SLUICE_ASSIGN_OR_RETURN(adds, WriteTableFiles(conn_.get(), fs_.get(), path_, rows, schema,
                                                  field_metadata, md, file_options));
    result.num_rows = rows.num_rows();
  }

  Transaction txn(fs_, path_, snap, options_.commit);
  for (const AddFile& a : adds) {
    auto storage = ResolveLogPath(path_, a.path);
    if (storage.ok()) txn.RecordWrittenFile(*storage);
  }
  if (upgraded) txn.Add(*upgraded);
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
  Protocol new_protocol;  // a new table's
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
    SLUICE_ASSIGN_OR_RETURN_CTX(new_protocol, NewTableProtocol(options.configuration), ctx);
    TakeProtocolProperties(&metadata.configuration);
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
  if (plan.schema_changed) {
    SLUICE_RETURN_NOT_OK_CTX(
        CheckStorableSchema(plan.table_schema, snap && HasTimestampNtz(snap->protocol)), ctx);
  }
  FieldMetadata field_metadata = snap ? snap->schema.metadata : FieldMetadata{};
  SLUICE_ASSIGN_OR_RETURN_CTX(metadata.schema_string,
                              SchemaToJson(plan.table_schema, field_metadata), ctx);
  // Column mapping: new fields (a new table, schema evolution) get physical names and ids.
  if (new_table || plan.schema_changed) {
    SLUICE_RETURN_NOT_OK_CTX(MapNewFields(plan.table_schema, &metadata, &field_metadata), ctx);
  }

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
                          WriteTableFiles(conn_.get(), fs_.get(), path_, rows, plan.table_schema,
                                          field_metadata, metadata, file_options));

  Transaction txn(fs_, path_, snap, options_.commit);
  txn.SetBeforePublish([&data_sync] { return data_sync.Wait(); });
  for (const AddFile& a : adds) {
    auto storage = ResolveLogPath(path_, a.path);
    if (storage.ok()) txn.RecordWrittenFile(*storage);
  }
  if (new_table) txn.Add(new_protocol);
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
  SLUICE_RETURN_NOT_OK_CTX(CheckStorableSchema(schema, HasTimestampNtz(snap->protocol)), ctx);
  Metadata md = snap->metadata;
  FieldMetadata field_metadata = snap->schema.metadata;
  SLUICE_ASSIGN_OR_RETURN_CTX(md.schema_string, SchemaToJson(schema, field_metadata), ctx);
  SLUICE_RETURN_NOT_OK_CTX(MapNewFields(schema, &md, &field_metadata), ctx);
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
  // Column mapping: none -> name gives every field its display name as physical name (the
  // files hold those names) and an id, as Delta's upgrade does; no other change of mode (none ->
  // id neither: the files have no field ids), as Delta refuses them.
  SLUICE_ASSIGN_OR_RETURN_CTX(ColumnMappingMode old_mode, ColumnMappingModeOf(snap->metadata), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(ColumnMappingMode new_mode, ColumnMappingModeOf(md), ctx);
  if (old_mode != new_mode) {
    if (old_mode != ColumnMappingMode::kNone || new_mode != ColumnMappingMode::kName) {
      return Status::NotSupported(ctx + ": changing delta.columnMapping.mode from '" +
                                  std::string(ColumnMappingModeName(old_mode)) + "' to '" +
                                  std::string(ColumnMappingModeName(new_mode)) +
                                  "' is not supported");
    }
    FieldMetadata field_metadata = snap->schema.metadata;
    SLUICE_RETURN_NOT_OK_CTX(
        MapNewFields(snap->schema.fields, &md, &field_metadata, /*keep_names=*/true), ctx);
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(const std::optional<Protocol> upgraded,
                              ProtocolChangeFor(snap->protocol, md), ctx);
  TakeProtocolProperties(&md.configuration);
  Transaction txn(fs_, path_, snap, options_.commit);
  if (upgraded) txn.Add(*upgraded);
  txn.Add(md);
  txn.SetOperation("SET TBLPROPERTIES",
                   {{"properties", JsonText(nlohmann::json(properties).dump())}});
  SLUICE_ASSIGN_OR_RETURN(CommitResult r, CommitLocked(&txn));
  return r.version;
}

namespace {

std::string PathText(const std::vector<std::string>& path) {
  std::string out;
  for (const std::string& p : path) out += (out.empty() ? "" : ".") + p;
  return out;
}

// The fields list holding the field at `path` (its struct, or the schema) and its index there;
// `resolved` gets the path with the schema's spelling. InvalidArgument naming the path when absent.
Result<std::pair<std::vector<engine::Field>*, size_t>> LocateField(
    engine::Schema* schema, const std::vector<std::string>& path,
    std::vector<std::string>* resolved) {
  std::vector<engine::Field>* fields = schema;
  for (size_t depth = 0; depth < path.size(); ++depth) {
    size_t index = fields->size();
    for (size_t i = 0; i < fields->size(); ++i) {
      if (AsciiEqualsIgnoreCase((*fields)[i].name, path[depth])) index = i;
    }
    if (index == fields->size()) {
      return Status::InvalidArgument("no column or field '" + PathText(path) + "' in the schema");
    }
    resolved->push_back((*fields)[index].name);
    if (depth + 1 == path.size()) return std::make_pair(fields, index);
    engine::DataType* t = &(*fields)[index].type;
    // element / key / value steps through lists and maps, then a struct's fields.
    while ((t->id == engine::TypeId::kList || t->id == engine::TypeId::kMap) &&
           depth + 1 < path.size()) {
      const std::string& step = path[depth + 1];
      size_t child = t->id == engine::TypeId::kList       ? 0
                     : AsciiEqualsIgnoreCase(step, "key") ? 0
                                                          : 1;
      const char* want = t->id == engine::TypeId::kList ? "element" : child == 0 ? "key" : "value";
      if (!AsciiEqualsIgnoreCase(step, want)) {
        return Status::InvalidArgument("'" + PathText(path) + "': a step into " +
                                       (t->id == engine::TypeId::kList ? "a list" : "a map") +
                                       " must be element, key or value");
      }
      resolved->push_back(want);
      ++depth;
      t = &t->children[child].type;
    }
    if (t->id != engine::TypeId::kStruct || depth + 1 >= path.size()) {
      return Status::InvalidArgument("'" + PathText(path) + "' does not name a struct field");
    }
    fields = &t->children;
  }
  return Status::InvalidArgument("an empty column path");
}

// The field metadata with every key at or under `from` moved under `to` (nullopt `to`: dropped).
FieldMetadata RekeyMetadata(const FieldMetadata& md, const std::string& from,
                            const std::optional<std::string>& to) {
  FieldMetadata out;
  for (const auto& [k, v] : md) {
    bool under = k == from || k.rfind(from + ".", 0) == 0;
    if (!under) {
      out[k] = v;
    } else if (to) {
      out[*to + k.substr(from.size())] = v;
    }
  }
  return out;
}

Status NeedsColumnMapping(const Metadata& md, const std::string& what) {
  SLUICE_ASSIGN_OR_RETURN(ColumnMappingMode mode, ColumnMappingModeOf(md));
  if (mode != ColumnMappingMode::kNone) return Status::OK();
  return Status::NotSupported(
      what +
      " needs column mapping (the data files keep the old names): run ALTER TABLE ... "
      "SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name') first");
}

}  // namespace

Result<Version> DeltaTableWriter::RenameColumn(const std::vector<std::string>& path,
                                               const std::string& new_name) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string ctx = "ALTER TABLE RENAME COLUMN on Delta table " + path_;
  SLUICE_ASSIGN_OR_RETURN(auto snap, RefreshLocked());
  if (!snap) return Status::NotFound(ctx + ": no Delta table at " + path_);
  SLUICE_RETURN_NOT_OK_CTX(CheckWriteSupported(snap->protocol, snap->metadata), ctx);
  SLUICE_RETURN_NOT_OK_CTX(NeedsColumnMapping(snap->metadata, "RENAME COLUMN"), ctx);
  if (new_name.empty() || new_name.find('.') != std::string::npos) {
    return Status::InvalidArgument(ctx + ": the new name '" + new_name + "' is not a column name");
  }
  engine::Schema schema = snap->schema.fields;
  std::vector<std::string> resolved;
  SLUICE_ASSIGN_OR_RETURN_CTX(auto where, LocateField(&schema, path, &resolved), ctx);
  auto& [fields, index] = where;
  for (size_t i = 0; i < fields->size(); ++i) {
    if (i != index && AsciiEqualsIgnoreCase((*fields)[i].name, new_name)) {
      return Status::InvalidArgument(ctx + ": a column or field named '" + (*fields)[i].name +
                                     "' already exists there");
    }
  }
  (*fields)[index].name = new_name;
  const std::string from = PathText(resolved);
  std::vector<std::string> renamed = resolved;
  renamed.back() = new_name;
  const std::string to = PathText(renamed);
  Metadata md = snap->metadata;
  if (resolved.size() == 1) {
    for (std::string& p : md.partition_columns) {
      if (AsciiEqualsIgnoreCase(p, from)) p = new_name;
    }
  }
  FieldMetadata field_metadata = RekeyMetadata(snap->schema.metadata, from, to);
  SLUICE_RETURN_NOT_OK_CTX(CheckStorableSchema(schema, HasTimestampNtz(snap->protocol)), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(md.schema_string, SchemaToJson(schema, field_metadata), ctx);
  Transaction txn(fs_, path_, snap, options_.commit);
  txn.Add(md);
  txn.SetOperation("RENAME COLUMN",
                   {{"oldColumnPath", JsonText(from)}, {"newColumnPath", JsonText(to)}});
  SLUICE_ASSIGN_OR_RETURN(CommitResult r, CommitLocked(&txn));
  return r.version;
}

Result<Version> DeltaTableWriter::DropColumns(const std::vector<std::vector<std::string>>& paths) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string ctx = "ALTER TABLE DROP COLUMNS on Delta table " + path_;
  SLUICE_ASSIGN_OR_RETURN(auto snap, RefreshLocked());
  if (!snap) return Status::NotFound(ctx + ": no Delta table at " + path_);
  SLUICE_RETURN_NOT_OK_CTX(CheckWriteSupported(snap->protocol, snap->metadata), ctx);
  SLUICE_RETURN_NOT_OK_CTX(NeedsColumnMapping(snap->metadata, "DROP COLUMN"), ctx);
  engine::Schema schema = snap->schema.fields;
  FieldMetadata field_metadata = snap->schema.metadata;
  std::vector<std::string> dropped;
  for (const std::vector<std::string>& path : paths) {
    std::vector<std::string> resolved;
    SLUICE_ASSIGN_OR_RETURN_CTX(auto where, LocateField(&schema, path, &resolved), ctx);
    auto& [fields, index] = where;
    const std::string name = PathText(resolved);
    if (resolved.size() == 1) {
      for (const std::string& p : snap->metadata.partition_columns) {
        if (AsciiEqualsIgnoreCase(p, name)) {
          return Status::InvalidArgument(ctx + ": cannot drop partition column '" + p + "'");
        }
      }
    }
    if (fields->size() == 1) {
      return Status::InvalidArgument(ctx + ": cannot drop '" + name + "', the last field of its " +
                                     (resolved.size() == 1 ? "table" : "struct"));
    }
    fields->erase(fields->begin() + static_cast<std::ptrdiff_t>(index));
    field_metadata = RekeyMetadata(field_metadata, name, std::nullopt);
    dropped.push_back(name);
  }
  Metadata md = snap->metadata;
  SLUICE_ASSIGN_OR_RETURN_CTX(md.schema_string, SchemaToJson(schema, field_metadata), ctx);
  Transaction txn(fs_, path_, snap, options_.commit);
  txn.Add(md);
  txn.SetOperation("DROP COLUMNS", {{"columns", JsonText(JsonArrayText(dropped))}});
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
                          WriteTableFiles(conn_.get(), fs_.get(), path_, rows, snap->schema.fields,
                                          snap->schema.metadata, snap->metadata, file_options));
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
