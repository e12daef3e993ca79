#include "sources/file_source.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/logging.h"
#include "common/strings.h"
#include "engine/json_decoder.h"
#include "engine/registered_batch.h"
#include "sources/json_lines.h"
#include "sources/schema_text.h"
#include "sources/source_util.h"

namespace sluice::sources {

namespace {

constexpr const char* kSchemasDir = "_schemas";
constexpr size_t kInferMaxFiles = 100;
constexpr const char* kJsonLinesView = "sluice_json_lines";

std::string PathList(const std::vector<std::string>& paths) {
  std::string out = "[";
  for (size_t i = 0; i < paths.size(); ++i) out += (i ? ", " : "") + QuoteLiteral(paths[i]);
  return out + "]";
}

std::string NameList(const engine::Schema& schema) {
  std::string out = "[";
  for (size_t i = 0; i < schema.size(); ++i) out += (i ? ", " : "") + QuoteLiteral(schema[i].name);
  return out + "]";
}

// JSON path for a top-level key.
std::string KeyPath(const std::string& name) {
  std::string esc;
  for (char c : name) {
    if (c == '"' || c == '\\') esc += '\\';
    esc += c;
  }
  return QuoteLiteral("$.\"" + esc + "\"");
}

// Types a stream may carry (Delta-storable, Spark-like): naive timestamps are instants (Spark's
// TIMESTAMP), and types Delta cannot store become VARCHAR.
engine::DataType NormalizeInferred(const engine::DataType& t) {
  using engine::TypeId;
  switch (t.id) {
    case TypeId::kTimestamp: {
      engine::DataType out;
      out.id = TypeId::kTimestampTz;
      return out;
    }
    case TypeId::kNull:
    case TypeId::kOther:
    case TypeId::kUuid:
    case TypeId::kTime:
    case TypeId::kInterval: {
      engine::DataType out;
      out.id = TypeId::kVarchar;
      return out;
    }
    case TypeId::kHugeInt: {
      engine::DataType out;
      out.id = TypeId::kDouble;
      return out;
    }
    default:
      return t;
  }
}

bool HasColumn(const engine::Schema& schema, const std::string& name) {
  for (const auto& f : schema) {
    if (f.name == name) return true;
  }
  return false;
}

}  // namespace

OffsetJson FileSource::MakeOffset(int64_t log_offset) {
  return "{\"logOffset\":" + std::to_string(log_offset) + "}";
}

Result<int64_t> FileSource::ParseOffset(const OffsetJson& json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("logOffset") ||
      !j["logOffset"].is_number_integer() || j["logOffset"].get<int64_t>() < 0) {
    return Status::Corruption("invalid file source offset '" + json +
                              "': expected {\"logOffset\":N}");
  }
  return j["logOffset"].get<int64_t>();
}

FileSource::FileSource(const SourceContext& ctx, FileSourceOptions options)
    : ctx_(ctx), options_(std::move(options)) {}

Result<std::unique_ptr<FileSource>> FileSource::Open(const SourceContext& ctx,
                                                     FileSourceOptions options) {
  if (!ctx.fs || !ctx.engine)
    return Status::InvalidArgument("FileSource: SourceContext needs fs and engine");
  if (options.path.empty()) return Status::InvalidArgument("read_files: option 'path' is required");
  if (ctx.checkpoint_dir.empty()) {
    return Status::InvalidArgument(
        "read_files: the file source needs a checkpoint directory for its file log");
  }
  std::unique_ptr<FileSource> src(new FileSource(ctx, std::move(options)));
  std::error_code ec;
  // A path with a scheme ("s3://b/landing") is used as written; its file system (or the refusal
  // of its scheme by name) comes from ctx.fs.
  std::string dir =
      !fs::PathScheme(src->options_.path).empty()
          ? src->options_.path
          : std::filesystem::absolute(src->options_.path, ec).lexically_normal().string();
  if (ec)
    return Status::InvalidArgument("read_files: cannot resolve path '" + src->options_.path + "'");
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  src->dir_ = dir;
  src->mode_ = src->options_.schema_evolution_mode.value_or(
      src->options_.schema ? SchemaEvolutionMode::kNone : SchemaEvolutionMode::kAddNewColumns);
  SLUICE_ASSIGN_OR_RETURN_CTX(src->conn_, ctx.engine->Connect(), src->Description());
  src->log_ = std::make_unique<FileSourceLog>(ctx.fs, ctx.checkpoint_dir);
  SLUICE_ASSIGN_OR_RETURN_CTX(auto loaded, src->log_->Load(), src->Description());
  src->seen_.insert(loaded.paths.begin(), loaded.paths.end());
  src->latest_log_id_ = loaded.latest_id;
  SLUICE_RETURN_NOT_OK(src->LoadSchema());
  return src;
}

Result<std::vector<fs::FileInfo>> FileSource::ListNewFiles() {
  Result<std::vector<fs::FileInfo>> listing =
      options_.recursive ? ctx_.fs->ListRecursive(dir_) : ctx_.fs->List(dir_);
  if (!listing.ok()) {
    if (listing.status().IsNotFound()) return std::vector<fs::FileInfo>();  // not created yet
    // A file where the directory should be is a mistake in the query, not a passing I/O error
    // (the listing fails with ENOTDIR): say so at once, so that a supervised run does not retry.
    auto info = ctx_.fs->Stat(dir_);
    if (info.ok() && !info->is_directory) {
      return Status::InvalidArgument("read_files: path '" + dir_ +
                                     "' is a file, not a directory: a streaming file source reads "
                                     "the new files of a directory; give the directory");
    }
    return listing.status().WithContext(Description());
  }
  std::vector<fs::FileInfo> out;
  for (auto& f : *listing) {
    if (f.is_directory) continue;
    // Skip hidden and metadata names anywhere below dir_.
    std::string rel = f.path.size() > dir_.size() ? f.path.substr(dir_.size()) : f.path;
    bool hidden = false;
    size_t pos = 0;
    while (pos < rel.size()) {
      if (rel[pos] == '/') {
        ++pos;
        continue;
      }
      if (rel[pos] == '.' || rel[pos] == '_') hidden = true;
      size_t next = rel.find('/', pos);
      pos = next == std::string::npos ? rel.size() : next;
    }
    if (hidden) continue;
    std::string uri = PathToFileUri(f.path);
    if (seen_.count(uri)) continue;
    if (available_now_ && !available_now_->count(uri)) continue;
    out.push_back(f);
  }
  std::stable_sort(out.begin(), out.end(), [](const fs::FileInfo& a, const fs::FileInfo& b) {
    if (a.mtime_ms != b.mtime_ms) return a.mtime_ms < b.mtime_ms;
    return a.path < b.path;
  });
  return out;
}

Status FileSource::PersistSchema(const engine::Schema& schema) {
  int64_t id = schema_id_ + 1;
  std::string path =
      fs::JoinPath(fs::JoinPath(ctx_.checkpoint_dir, kSchemasDir), std::to_string(id));
  Status st = ctx_.fs->CreateIfAbsent(path, "v1\n" + SchemaToJson(schema));
  if (st.IsAlreadyExists()) {
    return Status::Conflict(Description() + ": schema file " + path +
                            " already exists: another query is using the checkpoint concurrently");
  }
  SLUICE_RETURN_NOT_OK_CTX(st, Description());
  schema_id_ = id;
  return Status::OK();
}

Result<engine::Schema> FileSource::InferSchema(const std::vector<std::string>& paths) {
  std::string sql;
  switch (options_.format) {
    case FileFormat::kJson:
      sql = "SELECT * FROM read_json(" + PathList(paths) +
            ", format='newline_delimited', ignore_errors=true, union_by_name=true) LIMIT 0";
      break;
    case FileFormat::kCsv:
      sql = "SELECT * FROM read_csv(" + PathList(paths) +
            ", header=" + (options_.csv_header ? "true" : "false") +
            ", delim=" + QuoteLiteral(options_.csv_delimiter) +
            ", union_by_name=true, ignore_errors=true) LIMIT 0";
      break;
    case FileFormat::kParquet:
      sql = "SELECT * FROM read_parquet(" + PathList(paths) + ", union_by_name=true) LIMIT 0";
      break;
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch b, conn_->Query(sql),
                              Description() + ": inferring the schema");
  engine::Schema out;
  for (const auto& f : b.schema()) {
    if (f.name == kRescuedDataColumn) continue;
    out.push_back(engine::Field{f.name, NormalizeInferred(f.type), true});
  }
  return out;
}

Status FileSource::LoadSchema() {
  // The latest persisted schema, if any.
  std::optional<engine::Schema> persisted;
  std::string schemas = fs::JoinPath(ctx_.checkpoint_dir, kSchemasDir);
  auto listing = ctx_.fs->List(schemas);
  if (listing.ok()) {
    int64_t best = -1;
    for (const auto& f : *listing) {
      std::string name = fs::BaseName(f.path);
      if (name.empty() || name.size() > 18 || !std::all_of(name.begin(), name.end(), ::isdigit))
        continue;
      best = std::max<int64_t>(best, std::stoll(name));
    }
    if (best >= 0) {
      std::string path = fs::JoinPath(schemas, std::to_string(best));
      SLUICE_ASSIGN_OR_RETURN_CTX(std::string text, ctx_.fs->ReadFile(path), Description());
      if (text.rfind("v1\n", 0) != 0)
        return Status::Corruption(Description() + ": schema file " + path + " is malformed");
      SLUICE_ASSIGN_OR_RETURN_CTX(engine::Schema s, SchemaFromJson(text.substr(3)),
                                  Description() + ": schema file " + path);
      persisted = s;
      schema_id_ = best;
    }
  } else if (!listing.status().IsNotFound()) {
    return listing.status().WithContext(Description());
  }
  if (options_.schema) {
    SLUICE_ASSIGN_OR_RETURN_CTX(engine::Schema given,
                                ParseSchemaText(conn_.get(), *options_.schema, "schema"),
                                "read_files");
    bool extends = persisted && persisted->size() >= given.size();
    for (size_t i = 0; extends && i < given.size(); ++i) {
      extends = (*persisted)[i].name == given[i].name && (*persisted)[i].type == given[i].type;
    }
    if (extends) {
      data_schema_ = *persisted;
    } else {
      data_schema_ = given;
      SLUICE_RETURN_NOT_OK(PersistSchema(given));
    }
  } else if (persisted) {
    data_schema_ = *persisted;
  } else {
    SLUICE_ASSIGN_OR_RETURN(auto files, ListNewFiles());
    if (files.empty()) {
      return Status::InvalidArgument("read_files: unable to infer the schema: no files in " + dir_ +
                                     " yet; give the schema with the option 'schema' (e.g. schema "
                                     "=> 'id BIGINT, ts TIMESTAMP')");
    }
    std::vector<std::string> paths;
    for (size_t i = 0; i < files.size() && i < kInferMaxFiles; ++i) paths.push_back(files[i].path);
    SLUICE_ASSIGN_OR_RETURN(data_schema_, InferSchema(paths));
    if (data_schema_.empty()) {
      return Status::InvalidArgument("read_files: unable to infer the schema from the files in " +
                                     dir_ + "; give the schema with the option 'schema'");
    }
    SLUICE_RETURN_NOT_OK(PersistSchema(data_schema_));
  }
  if (HasColumn(data_schema_, kRescuedDataColumn)) {
    return Status::InvalidArgument(
        "read_files: the schema may not contain the column _rescued_data");
  }
  schema_ = data_schema_;
  engine::DataType varchar;
  varchar.id = engine::TypeId::kVarchar;
  schema_.push_back(engine::Field{kRescuedDataColumn, varchar, true});
  return Status::OK();
}

Result<std::optional<OffsetJson>> FileSource::LatestOffset(const std::optional<OffsetJson>& start,
                                                           const ReadLimit& limit) {
  int64_t s = -1;
  if (start) {
    SLUICE_ASSIGN_OR_RETURN_CTX(s, ParseOffset(*start), Description());
  }
  if (s > latest_log_id_) {
    return Status::Corruption(Description() + ": offset " + *start +
                              " is beyond the file source log in " + log_->dir() +
                              " (latest entry " + std::to_string(latest_log_id_) + ")");
  }
  // A damaged latest log entry is removed here when no batch was planned with it
  // (file_source_log.h).
  SLUICE_ASSIGN_OR_RETURN_CTX(latest_log_id_, log_->PrepareToPlan(s, latest_log_id_),
                              Description());
  SLUICE_ASSIGN_OR_RETURN(auto files, ListNewFiles());
  outstanding_files_ = static_cast<int64_t>(files.size());
  outstanding_bytes_ = 0;
  for (const auto& f : files) outstanding_bytes_ += f.size;
  // An entry written by an earlier run whose batch was never planned: deliver it first.
  if (latest_log_id_ > s) return std::optional<OffsetJson>(MakeOffset(latest_log_id_));
  std::optional<int64_t> max_files, max_bytes;
  if (!limit.all_available) {
    max_files = limit.max_files ? limit.max_files : options_.max_files_per_trigger;
    max_bytes = limit.max_bytes ? limit.max_bytes : options_.max_bytes_per_trigger;
  }
  std::vector<FileEntry> taken;
  int64_t bytes = 0;
  int64_t id = latest_log_id_ + 1;
  for (const auto& f : files) {
    if (!taken.empty() && ((max_files && static_cast<int64_t>(taken.size()) >= *max_files) ||
                           (max_bytes && bytes >= *max_bytes))) {
      break;
    }
    taken.push_back(FileEntry{PathToFileUri(f.path), f.mtime_ms, id});
    bytes += f.size;
  }
  if (taken.empty()) return start;
  SLUICE_RETURN_NOT_OK_CTX(log_->Add(id, taken), Description());
  for (const auto& e : taken) seen_.insert(e.path);
  latest_log_id_ = id;
  outstanding_files_ -= static_cast<int64_t>(taken.size());
  outstanding_bytes_ -= bytes;
  return std::optional<OffsetJson>(MakeOffset(id));
}

Status FileSource::PrepareForAvailableNow() {
  available_now_.reset();
  SLUICE_ASSIGN_OR_RETURN(auto files, ListNewFiles());
  std::set<std::string> now;
  for (const auto& f : files) now.insert(PathToFileUri(f.path));
  available_now_ = std::move(now);
  return Status::OK();
}

Result<engine::Batch> FileSource::GetBatch(const std::optional<OffsetJson>& start,
                                           const OffsetJson& end) {
  int64_t s = -1;
  if (start) {
    SLUICE_ASSIGN_OR_RETURN_CTX(s, ParseOffset(*start), Description());
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(int64_t e, ParseOffset(end), Description());
  if (e < s) {
    return Status::InvalidArgument(Description() + ": end offset " + end +
                                   " is before start offset " + *start);
  }
  std::vector<std::string> paths;
  for (int64_t id = s + 1; id <= e; ++id) {
    SLUICE_ASSIGN_OR_RETURN_CTX(auto entries, log_->Get(id), Description());
    for (const auto& entry : entries) {
      SLUICE_ASSIGN_OR_RETURN_CTX(std::string p, FileUriToPath(entry.path), Description());
      paths.push_back(p);
    }
  }
  last_rescued_ = 0;
  if (paths.empty()) return engine::EmptyBatch(schema_);
  return ReadFiles(paths, e);
}

Status FileSource::CheckNewColumns(const std::vector<std::string>& paths,
                                   const std::vector<std::string>& new_columns) {
  if (new_columns.empty()) return Status::OK();
  if (mode_ != SchemaEvolutionMode::kAddNewColumns &&
      mode_ != SchemaEvolutionMode::kFailOnNewColumns) {
    return Status::OK();
  }
  std::string names;
  for (const auto& n : new_columns) names += (names.empty() ? "" : ", ") + n;
  if (mode_ == SchemaEvolutionMode::kFailOnNewColumns) {
    return Status::InvalidArgument(
        Description() + ": new columns [" + names +
        "] found in the files of this batch and schemaEvolutionMode is 'failOnNewColumns': "
        "give a schema with these columns or use another schemaEvolutionMode");
  }
  engine::Schema inferred;
  auto inf = InferSchema(paths);
  if (inf.ok()) inferred = *inf;
  engine::Schema evolved = data_schema_;
  for (const auto& n : new_columns) {
    engine::DataType t;
    t.id = engine::TypeId::kVarchar;
    for (const auto& f : inferred) {
      if (f.name == n) t = f.type;
    }
    evolved.push_back(engine::Field{n, t, true});
  }
  SLUICE_RETURN_NOT_OK(PersistSchema(evolved));
  return Status::InvalidArgument(
      Description() + ": encountered new columns [" + names +
      "] in the files of this batch (schemaEvolutionMode 'addNewColumns'). The schema was "
      "updated to (" +
      SchemaToText(evolved) + "); restart the query to continue with the new columns");
}

Result<engine::Batch> FileSource::ReadFiles(const std::vector<std::string>& paths,
                                            int64_t log_offset) {
  Result<engine::Batch> out = Status::Internal("unreachable");
  switch (options_.format) {
    case FileFormat::kJson:
      out = ReadJson(paths);
      break;
    case FileFormat::kCsv:
      out = ReadCsv(paths);
      break;
    case FileFormat::kParquet:
      out = ReadParquet(paths);
      break;
  }
  if (!out.ok()) return out.status().WithContext(Description());
  if (options_.format == FileFormat::kJson && last_json_decoded_) {
    last_rescued_ = decoded_rescued_;  // counted while decoding
  } else {
    SLUICE_ASSIGN_OR_RETURN(
        engine::Batch count,
        engine::QueryOver(
            conn_.get(), "sluice_file_batch", *out,
            "SELECT count(*) FROM sluice_file_batch WHERE _rescued_data IS NOT NULL"));
    SLUICE_ASSIGN_OR_RETURN(auto n, count.GetInt64(0, 0));
    last_rescued_ = n.value_or(0);
  }
  total_rescued_ += last_rescued_;
  if (last_rescued_ > 0 && options_.bad_records_path)
    SLUICE_RETURN_NOT_OK(WriteBadRecords(*out, log_offset));
  return out;
}

// JSON lines are decoded in C++ (engine/json_decoder.h: DuckDB's parser and casts, one pass)
// when the schema's types allow it, and by the SQL below otherwise. Both give the same batch:
// file_source_json_test.cc compares them on generated and edge-case lines in every mode.
Result<engine::Batch> FileSource::ReadJson(const std::vector<std::string>& paths) {
  last_json_decoded_ = false;
  if (options_.json_decoder && engine::JsonDecoder::Supports(data_schema_)) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<engine::Batch> decoded, ReadJsonDecoded(paths));
    if (decoded) {
      last_json_decoded_ = true;
      return std::move(*decoded);
    }
  }
  return ReadJsonSql(paths);
}

Result<std::optional<engine::Batch>> FileSource::ReadJsonDecoded(
    const std::vector<std::string>& paths) {
  engine::JsonDecoderOptions dopts;
  dopts.extra_columns = {kRescuedDataColumn};
  const bool new_columns_check = mode_ == SchemaEvolutionMode::kAddNewColumns ||
                                 mode_ == SchemaEvolutionMode::kFailOnNewColumns;
  const bool rescue = mode_ == SchemaEvolutionMode::kRescue;
  if (rescue) {
    dopts.unknown_keys = engine::JsonUnknownKeys::kKeysAndValues;
  } else if (new_columns_check) {
    dopts.unknown_keys = engine::JsonUnknownKeys::kKeys;
  }
  // What the SQL puts into _rescued_data: '"<column>":' as nlohmann writes the name (the SQL's
  // literal), each file's path as to_json writes it.
  std::vector<std::string> prefixes;
  try {
    for (const auto& f : data_schema_) prefixes.push_back(nlohmann::json(f.name).dump() + ":");
  } catch (const std::exception&) {
    return std::optional<engine::Batch>();  // a name nlohmann cannot write: the SQL path
  }
  std::vector<std::string> path_json;
  for (const auto& p : paths) {
    auto q = engine::JsonDecoder::QuoteJsonString(p);
    if (!q.ok()) return std::optional<engine::Batch>();
    path_json.push_back(*q);
  }

  // Consecutive runs of files decoded on separate threads (each with its own decoder), joined
  // in file order: the batch, the first error and the new columns are those of one pass.
  struct FirstSeen {
    int64_t fidx;
    int64_t ln;
  };
  struct Part {
    size_t begin = 0, end = 0;  // files [begin, end)
    std::unique_ptr<engine::JsonDecoder> decoder;
    std::map<std::string, FirstSeen> fresh_keys;  // new columns: min(fidx), min(ln) as the SQL
    int64_t rescued = 0;
    bool use_sql = false;
    Status status;
  };
  std::vector<Part> parts;
  {
    // Up to one thread per core (4 at most) when the batch has at least 16 MiB per thread.
    std::vector<uint64_t> sizes;
    uint64_t total = 0;
    for (const auto& p : paths) {
      std::error_code ec;
      uint64_t size = 0;
      if (fs::PathScheme(p).empty()) {
        size = std::filesystem::file_size(p, ec);
      } else if (Result<fs::FileInfo> info = ctx_.fs->Stat(p); info.ok()) {
        size = static_cast<uint64_t>(info->size);  // s3://: one HEAD
      }
      sizes.push_back(ec ? 0 : size);
      total += sizes.back();
    }
    const size_t cores = std::max(1u, std::thread::hardware_concurrency());
    const size_t wanted = options_.json_decode_threads > 0
                              ? static_cast<size_t>(options_.json_decode_threads)
                              : std::min<size_t>({cores, 4, static_cast<size_t>(total >> 24)});
    const size_t n = std::max<size_t>(1, std::min(wanted, paths.size()));
    size_t begin = 0;
    uint64_t done = 0;
    for (size_t i = 0; i < n; ++i) {
      size_t end = begin;
      const uint64_t target = total * (i + 1) / n;
      while (end < paths.size() && (i + 1 == n || done < target || end == begin)) {
        done += sizes[end];
        ++end;
      }
      if (end == begin) break;
      Part& part = parts.emplace_back();
      part.begin = begin;
      part.end = end;
      SLUICE_ASSIGN_OR_RETURN(part.decoder, engine::JsonDecoder::Make(data_schema_, dopts));
      begin = end;
    }
  }
  auto decode_part = [&](Part& part) {
    engine::JsonRow row;
    std::string rescued;
    std::vector<std::string> part_paths(paths.begin() + static_cast<ptrdiff_t>(part.begin),
                                        paths.begin() + static_cast<ptrdiff_t>(part.end));
    part.status =
        ForEachJsonLine(part_paths, [&](size_t pf, int64_t ln, std::string_view line) -> Status {
          const size_t f = part.begin + pf;
          Status d = part.decoder->Decode(line, &row);
          if (!d.ok()) return d.IsInvalidArgument() ? InvalidUtf8LineError(paths[f], ln) : d;
          std::optional<std::string_view> value;
          if (!row.is_object) {
            value = line;
          } else {
            if (new_columns_check) {
              const int64_t fidx = static_cast<int64_t>(f) + 1;
              for (const auto& u : row.unknown_keys) {
                auto [it, inserted] = part.fresh_keys.try_emplace(u.key, FirstSeen{fidx, ln});
                if (!inserted) {
                  it->second.fidx = std::min(it->second.fidx, fidx);
                  it->second.ln = std::min(it->second.ln, ln);
                }
              }
            }
            const bool rescue_keys = rescue && !row.unknown_keys.empty();
            if (!row.bad_values.empty() || rescue_keys) {
              rescued = "{";
              for (const auto& b : row.bad_values) {
                if (rescued.size() > 1) rescued += ',';
                rescued += prefixes[b.column];
                rescued += b.json;
              }
              if (rescue_keys) {
                for (const auto& u : row.unknown_keys) {
                  // The SQL looks an unknown key up with the path '$."<key>"', escaping only
                  // quotes: keys it would not find (backslashes) or cannot use (empty) take the SQL
                  // path.
                  if (u.key.empty() || u.key.find('\\') != std::string::npos) {
                    part.use_sql = true;
                    return Status::Cancelled("JSON batch needs the SQL path");
                  }
                  if (rescued.size() > 1) rescued += ',';
                  rescued += u.key_json;
                  rescued += ':';
                  rescued += u.value_json;
                }
              }
              rescued += ",\"_file_path\":";
              rescued += path_json[f];
              rescued += '}';
              value = rescued;
            }
          }
          if (value) ++part.rescued;
          SLUICE_RETURN_NOT_OK(part.decoder->SetExtra(0, value));
          return part.decoder->EndRow();
        });
  };
  // No exception may leave a thread (std::terminate): allocation failures become a Status.
  auto decode = [&](Part& part) {
    try {
      decode_part(part);
    } catch (const std::exception& e) {
      part.status = Status::Internal(std::string("decoding JSON: ") + e.what());
    }
  };
  if (parts.size() == 1) {
    decode(parts[0]);
  } else {
    std::vector<std::thread> threads;
    for (size_t i = 1; i < parts.size(); ++i) threads.emplace_back(decode, std::ref(parts[i]));
    decode(parts[0]);
    for (auto& t : threads) t.join();
  }
  // One pass would have stopped at the first fallback or error, in file order; the SQL path
  // reports the first error of all the files itself.
  for (const Part& part : parts) {
    if (part.use_sql) return std::optional<engine::Batch>();
  }
  for (const Part& part : parts) SLUICE_RETURN_NOT_OK(part.status);
  std::map<std::string, FirstSeen> fresh_keys;
  for (const Part& part : parts) {
    for (const auto& [key, seen] : part.fresh_keys) {
      auto [it, inserted] = fresh_keys.try_emplace(key, seen);
      if (!inserted) {
        it->second.fidx = std::min(it->second.fidx, seen.fidx);
        it->second.ln = std::min(it->second.ln, seen.ln);
      }
    }
  }
  if (!fresh_keys.empty()) {
    std::vector<std::pair<FirstSeen, std::string>> order;
    order.reserve(fresh_keys.size());
    for (auto& [key, seen] : fresh_keys) order.emplace_back(seen, key);
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      if (a.first.fidx != b.first.fidx) return a.first.fidx < b.first.fidx;
      if (a.first.ln != b.first.ln) return a.first.ln < b.first.ln;
      return a.second < b.second;
    });
    std::vector<std::string> fresh;
    fresh.reserve(order.size());
    for (auto& [seen, key] : order) fresh.push_back(std::move(key));
    SLUICE_RETURN_NOT_OK(CheckNewColumns(paths, fresh));
  }
  std::vector<engine::JsonDecoder*> decoders;
  decoded_rescued_ = 0;
  for (Part& part : parts) {
    decoders.push_back(part.decoder.get());
    decoded_rescued_ += part.rescued;
  }
  SLUICE_ASSIGN_OR_RETURN(engine::Batch out, engine::JsonDecoder::FinishAll(decoders));
  return std::optional<engine::Batch>(std::move(out));
}

Result<engine::Batch> FileSource::ReadJsonSql(const std::vector<std::string>& paths) {
  const std::string list = PathList(paths);
  const std::string names = NameList(data_schema_);
  // The lines are split in C++ (json_lines.h) and registered as a view: one pass, linear in
  // the bytes read.
  SLUICE_ASSIGN_OR_RETURN(engine::Batch lines, ReadJsonLines(paths));
  SLUICE_ASSIGN_OR_RETURN(engine::RegisteredBatch registered_lines,
                          engine::RegisteredBatch::Make(conn_.get(), kJsonLinesView, lines));
  std::string lines_sql =
      // A valid JSON text that starts with '{' is an object: json_type only for the others.
      std::string("WITH p AS (SELECT fidx, ln, line, CASE WHEN NOT json_valid(line) THEN false ") +
      "WHEN starts_with(line, '{') THEN true ELSE json_type(line) = 'OBJECT' END AS ok FROM " +
      kJsonLinesView + ")";
  if (mode_ == SchemaEvolutionMode::kAddNewColumns ||
      mode_ == SchemaEvolutionMode::kFailOnNewColumns) {
    SLUICE_ASSIGN_OR_RETURN(
        engine::Batch keys,
        conn_->Query(lines_sql +
                     ", k AS (SELECT fidx, ln, unnest(json_keys(line)) AS key FROM p WHERE ok) "
                     "SELECT key FROM k WHERE NOT list_contains(" +
                     names + ", key) GROUP BY key ORDER BY min(fidx), min(ln), key"));
    std::vector<std::string> fresh;
    for (int64_t r = 0; r < keys.num_rows(); ++r)
      fresh.push_back(keys.GetString(r, 0).value_or(""));
    SLUICE_RETURN_NOT_OK(CheckNewColumns(paths, fresh));
  }
  // One parse of each line for the values (json_transform) and one for the JSON types of all
  // the columns (json_type with a list of paths); a column's raw text is extracted only for the
  // rows that rescue it. Internal column names (__sluice_*) keep user names from colliding.
  // No ORDER BY: the lines view is in file then line order, and DuckDB keeps the insertion order
  // of a query without ORDER BY (preserve_insertion_order, on by default); sorting the whole
  // batch cost about a tenth of the read.
  nlohmann::ordered_json spec = nlohmann::ordered_json::object();
  std::string key_paths;
  for (const auto& f : data_schema_) {
    spec[f.name] = f.type.ToSql();
    key_paths += (key_paths.empty() ? "" : ", ") + KeyPath(f.name);
  }
  const std::string jts =
      key_paths.empty() ? "CAST(NULL AS VARCHAR[])" : "json_type(line, [" + key_paths + "])";
  std::string sql =
      lines_sql + ", t AS (SELECT fidx, ln, line, ok, CASE WHEN ok THEN json_transform(line, " +
      QuoteLiteral(spec.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) +
      ") END AS t, CASE WHEN ok THEN " + jts +
      " END AS jts FROM p), v AS (SELECT fidx, ln, line, ok, jts";
  std::string frags, outs;
  for (size_t i = 0; i < data_schema_.size(); ++i) {
    const auto& f = data_schema_[i];
    const std::string jt = "jts[" + std::to_string(i + 1) + "]";
    const std::string col = "__sluice_c" + std::to_string(i);
    std::string value = "struct_extract(t, " + QuoteLiteral(f.name) + ")";
    using engine::TypeId;
    if (f.type.id == TypeId::kTinyInt || f.type.id == TypeId::kSmallInt ||
        f.type.id == TypeId::kInteger || f.type.id == TypeId::kBigInt ||
        f.type.id == TypeId::kHugeInt) {
      // DuckDB would round 1.5 into an integer column; Spark treats it as a bad value.
      value =
          "CASE WHEN NOT ok THEN NULL WHEN " + jt + " = 'DOUBLE' THEN NULL ELSE " + value + " END";
    }
    sql += ", " + value + " AS " + col;
    outs += col + " AS " + QuoteIdentifier(f.name) + ", ";
    frags += (frags.empty() ? "" : ", ") + std::string("CASE WHEN ") + col + " IS NULL AND " + jt +
             " IS NOT NULL AND " + jt + " <> 'NULL' THEN " +
             QuoteLiteral(nlohmann::json(f.name).dump() + ":") + " || json_extract(line, " +
             KeyPath(f.name) + ")::VARCHAR END";
  }
  std::string unknown = "[]";
  if (mode_ == SchemaEvolutionMode::kRescue) {
    unknown = "list_transform(list_filter(json_keys(line), k -> NOT list_contains(" + names +
              ", k)), k -> to_json(k)::VARCHAR || ':' || json_extract(line, '$.\"' || replace(k, "
              "'\"', '\\\"') || '\"')::VARCHAR)";
  }
  sql += " FROM t), r AS (SELECT *, CASE WHEN ok THEN list_filter(list_concat([" + frags +
         "]::VARCHAR[], " + unknown +
         "), x -> x IS NOT NULL) END AS __sluice_rescued FROM v) SELECT " + outs +
         "CASE WHEN NOT ok THEN line WHEN len(__sluice_rescued) = 0 THEN NULL ELSE '{' || "
         "array_to_string(__sluice_rescued, ',') || ',\"_file_path\":' || to_json(list_extract(" +
         list + ", fidx))::VARCHAR || '}' END AS _rescued_data FROM r";
  return conn_->Query(sql);
}

Result<std::optional<std::string>> FileSource::CheckCsvHeader(const std::string& path,
                                                              const engine::Schema& header) {
  std::vector<std::string> missing, unknown;
  for (const auto& f : data_schema_) {
    if (!HasColumn(header, f.name)) missing.push_back(f.name);
  }
  for (const auto& f : header) {
    if (!HasColumn(data_schema_, f.name)) unknown.push_back(f.name);
  }
  auto list = [](const auto& fields) {
    std::string out = "[";
    for (const auto& f : fields) out += (out.size() > 1 ? ", " : "") + f.name;
    return out + "]";
  };
  bool in_order = header.size() >= data_schema_.size();
  for (size_t i = 0; in_order && i < data_schema_.size(); ++i) {
    in_order = AsciiLower(header[i].name) == AsciiLower(data_schema_[i].name);
  }
  if (!options_.csv_enforce_schema && (!in_order || header.size() != data_schema_.size())) {
    // Spark's CSVHeaderChecker with enforceSchema=false, whatever the mode.
    return Status::InvalidArgument(
        Description() + ": " + path + ": the CSV header does not conform to the schema: header " +
        list(header) + ", schema " + list(data_schema_) + " (enforceSchema => false)");
  }
  if (missing.empty() || unknown.empty()) return std::optional<std::string>();
  if (missing.size() == data_schema_.size()) {
    // The header names none of the schema's columns: Spark (enforceSchema, its default) reads the
    // columns by position and warns; so does Sluice (the values never become silent NULLs).
    SLUICE_LOG(kWarning) << Description() << ": " << path << ": the CSV header " << list(header)
                         << " names none of the schema's columns " << list(data_schema_)
                         << ": its columns are taken by position, as Spark does "
                         << "(enforceSchema => false refuses such a file)";
    engine::Schema names = header;
    for (size_t i = 0; i < names.size() && i < data_schema_.size(); ++i) {
      names[i].name = data_schema_[i].name;
    }
    return std::optional<std::string>(NameList(names));
  }
  // Some names match: columns are matched by name (Auto Loader's rule); the others are NULL,
  // the header's unknown columns rescued or dropped as the schema evolution mode says. Said once
  // per file, never silently.
  auto join = [](const std::vector<std::string>& v) {
    std::string out = "[";
    for (const auto& n : v) out += (out.size() > 1 ? ", " : "") + n;
    return out + "]";
  };
  SLUICE_LOG(kWarning) << Description() << ": " << path << ": the CSV header " << list(header)
                       << " does not name the schema's columns " << join(missing)
                       << " (NULL in its rows); its columns " << join(unknown)
                       << " are not in the schema";
  return std::optional<std::string>();
}

Result<engine::Batch> FileSource::ReadCsv(const std::vector<std::string>& paths) {
  // One read_csv per file (DuckDB keeps rejected rows only without union_by_name), all VARCHAR;
  // rejected rows keep their raw line.
  std::vector<std::string> header_new;
  std::string union_sql;
  std::vector<engine::RegisteredBatch> registered;  // each file's rows and rejects, as views
  for (size_t i = 0; i < paths.size(); ++i) {
    std::string opts = ", header=" + std::string(options_.csv_header ? "true" : "false") +
                       ", delim=" + QuoteLiteral(options_.csv_delimiter) + ", all_varchar=true";
    if (!options_.csv_header) opts += ", names=" + NameList(data_schema_) + ", null_padding=true";
    auto read = [&](const std::string& extra) {
      return conn_->Query(
          "DROP TABLE IF EXISTS sluice_csv_rej; DROP TABLE IF EXISTS sluice_csv_scan; SELECT * "
          "FROM read_csv(" +
          QuoteLiteral(paths[i]) + opts + extra +
          ", store_rejects=true, rejects_table='sluice_csv_rej', rejects_scan='sluice_csv_scan')");
    };
    SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch rows, read(""), Description() + ": " + paths[i]);
    if (options_.csv_header) {
      SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> names,
                              CheckCsvHeader(paths[i], rows.schema()));
      if (names) {
        SLUICE_ASSIGN_OR_RETURN_CTX(rows, read(", names=" + *names),
                                    Description() + ": " + paths[i]);
      }
    }
    SLUICE_ASSIGN_OR_RETURN(
        engine::Batch rej,
        conn_->Query(
            "SELECT line, csv_line FROM sluice_csv_rej GROUP BY line, csv_line ORDER BY line"));
    for (const auto& f : rows.schema()) {
      if (!HasColumn(data_schema_, f.name) &&
          std::find(header_new.begin(), header_new.end(), f.name) == header_new.end()) {
        header_new.push_back(f.name);
      }
    }
    std::string rows_name = "sluice_csv_rows_" + std::to_string(i),
                rej_name = "sluice_csv_rej_" + std::to_string(i);
    SLUICE_ASSIGN_OR_RETURN(engine::RegisteredBatch rows_view,
                            engine::RegisteredBatch::Make(conn_.get(), rows_name, rows));
    registered.push_back(std::move(rows_view));
    SLUICE_ASSIGN_OR_RETURN(engine::RegisteredBatch rej_view,
                            engine::RegisteredBatch::Make(conn_.get(), rej_name, rej));
    registered.push_back(std::move(rej_view));
    std::string cols, frags;
    for (const auto& f : data_schema_) {
      bool present = HasColumn(rows.schema(), f.name);
      std::string raw = present ? QuoteIdentifier(f.name) : "CAST(NULL AS VARCHAR)";
      std::string cast = "TRY_CAST(" + raw + " AS " + f.type.ToSql() + ")";
      cols += cast + " AS " + QuoteIdentifier(f.name) + ", ";
      frags += (frags.empty() ? "" : ", ") + std::string("CASE WHEN ") + raw + " IS NOT NULL AND " +
               cast + " IS NULL THEN " + QuoteLiteral(nlohmann::json(f.name).dump() + ":") +
               " || to_json(" + raw + ")::VARCHAR END";
    }
    std::string unknown = "[]";
    if (mode_ == SchemaEvolutionMode::kRescue) {
      unknown = "[";
      bool first = true;
      for (const auto& f : rows.schema()) {
        if (HasColumn(data_schema_, f.name)) continue;
        unknown += std::string(first ? "" : ", ") + "CASE WHEN " + QuoteIdentifier(f.name) +
                   " IS NOT NULL THEN " + QuoteLiteral(nlohmann::json(f.name).dump() + ":") +
                   " || to_json(" + QuoteIdentifier(f.name) + ")::VARCHAR END";
        first = false;
      }
      unknown += "]::VARCHAR[]";
    }
    std::string rescued =
        "list_filter(list_concat([" + frags + "]::VARCHAR[], " + unknown + "), x -> x IS NOT NULL)";
    std::string nulls;
    for (const auto& f : data_schema_)
      nulls += "CAST(NULL AS " + f.type.ToSql() + ") AS " + QuoteIdentifier(f.name) + ", ";
    if (!union_sql.empty()) union_sql += " UNION ALL ";
    union_sql += "(SELECT * EXCLUDE (o) FROM (SELECT " + cols + "CASE WHEN len(" + rescued +
                 ") = 0 THEN NULL ELSE '{' || array_to_string(" + rescued +
                 ", ',') || ',\"_file_path\":' || " + "to_json(" + QuoteLiteral(paths[i]) +
                 ")::VARCHAR || '}' END AS _rescued_data, " + std::to_string(i) +
                 " * 2 AS o FROM " + rows_name + " UNION ALL SELECT " + nulls +
                 "csv_line AS _rescued_data, " + std::to_string(i) + " * 2 + 1 AS o FROM " +
                 rej_name + ") ORDER BY o)";
  }
  SLUICE_RETURN_NOT_OK(CheckNewColumns(paths, header_new));
  return conn_->Query("SELECT * FROM (" + union_sql + ")");  // `registered` drops the views
}

Result<engine::Batch> FileSource::ReadParquet(const std::vector<std::string>& paths) {
  const std::string src = "read_parquet(" + PathList(paths) + ", union_by_name=true)";
  SLUICE_ASSIGN_OR_RETURN(engine::Batch probe, conn_->Query("SELECT * FROM " + src + " LIMIT 0"));
  std::vector<std::string> fresh;
  for (const auto& f : probe.schema()) {
    if (!HasColumn(data_schema_, f.name)) fresh.push_back(f.name);
  }
  SLUICE_RETURN_NOT_OK(CheckNewColumns(paths, fresh));
  std::string sql = "SELECT ", frags;
  for (const auto& f : data_schema_) {
    bool present = HasColumn(probe.schema(), f.name);
    std::string raw = present ? QuoteIdentifier(f.name) : "NULL";
    std::string cast = "TRY_CAST(" + raw + " AS " + f.type.ToSql() + ")";
    sql += cast + " AS " + QuoteIdentifier(f.name) + ", ";
    if (present) {
      frags += (frags.empty() ? "" : ", ") + std::string("CASE WHEN ") + raw + " IS NOT NULL AND " +
               cast + " IS NULL THEN " + QuoteLiteral(nlohmann::json(f.name).dump() + ":") +
               " || to_json(" + raw + ")::VARCHAR END";
    }
  }
  std::string unknown = "[]";
  if (mode_ == SchemaEvolutionMode::kRescue) {
    unknown = "[";
    bool first = true;
    for (const auto& n : fresh) {
      unknown += std::string(first ? "" : ", ") + "CASE WHEN " + QuoteIdentifier(n) +
                 " IS NOT NULL THEN " + QuoteLiteral(nlohmann::json(n).dump() + ":") +
                 " || to_json(" + QuoteIdentifier(n) + ")::VARCHAR END";
      first = false;
    }
    unknown += "]::VARCHAR[]";
  }
  std::string rescued =
      "list_filter(list_concat([" + frags + "]::VARCHAR[], " + unknown + "), x -> x IS NOT NULL)";
  sql += "CASE WHEN len(" + rescued + ") = 0 THEN NULL ELSE '{' || array_to_string(" + rescued +
         ", ',') || '}' END AS _rescued_data FROM " + src;
  return conn_->Query(sql);
}

Status FileSource::WriteBadRecords(const engine::Batch& batch, int64_t log_offset) {
  size_t col = *batch.ColumnIndex(kRescuedDataColumn);
  std::string text;
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    auto v = batch.GetString(r, col);
    if (!v) continue;
    nlohmann::ordered_json j;
    j["record"] = *v;
    j["source"] = dir_;
    j["logOffset"] = log_offset;
    text += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  std::string path =
      fs::JoinPath(fs::JoinPath(*options_.bad_records_path, std::to_string(log_offset)),
                   "bad_records/part-00000.json");
  Status st = ctx_.fs->CreateIfAbsent(path, text);
  if (st.IsAlreadyExists())
    return Status::OK();  // a re-run of the same batch wrote the same records
  return st.WithContext(Description() + ": writing bad records");
}

std::map<std::string, std::string> FileSource::Metrics(
    const std::optional<OffsetJson>& latest) const {
  (void)latest;
  return {{"numBytesOutstanding", std::to_string(outstanding_bytes_)},
          {"numFilesOutstanding", std::to_string(outstanding_files_)},
          {"numRescuedRows", std::to_string(last_rescued_)},
          {"numRescuedRowsTotal", std::to_string(total_rescued_)}};
}

}  // namespace sluice::sources
