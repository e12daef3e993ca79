// Checkpoint reading (declared in snapshot.h): the checkpoint's actions in bulk.
//
// A checkpoint of a long-lived table holds one add (or remove) row per file, so it is read
// without per-row engine calls and without JSON for the common fields:
//  1. `SELECT * ... LIMIT 0` gives the checkpoint's columns and the add/remove struct fields.
//  2. One query renders every add/remove row as a compact record of length-prefixed fields
//     ("<bytes>:<text>", "~" for NULL) and concatenates the records of up to kRowsPerCell rows
//     into one VARCHAR cell, so a checkpoint of N files costs N/kRowsPerCell cell reads. Rows
//     with fields that only JSON parsing handles (deletionVector; stats_parsed without stats)
//     carry to_json(add) instead and go through the commit-line parser.
//  3. The few remaining rows (protocol, metaData, txn, domainMetadata, unknown columns) are
//     rendered with to_json and parsed like commit lines, so unknown columns stay ignored.
// V2 checkpoints (the v2Checkpoint feature): the top-level file, JSON (parsed as a commit file) or
// Parquet (as above), holds protocol, metaData, txn, domainMetadata, checkpointMetadata and
// `sidecar` actions; each sidecar names a Parquet file in _delta_log/_sidecars/ holding adds and
// removes, read in bulk as above.
#include <charconv>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "delta/paths.h"
#include "delta/schema.h"
#include "delta/snapshot.h"
#include "delta/values.h"

namespace sluice::delta {

namespace {

constexpr int64_t kRowsPerCell = 8192;

std::string Ident(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

// "<bytes>:<text>" for a non-NULL VARCHAR expression, "~" for NULL.
std::string Encode(const std::string& varchar_expr) {
  return "coalesce(CAST(strlen(" + varchar_expr + ") AS VARCHAR) || ':' || " + varchar_expr +
         ", '~')";
}

// Builds the record expression of one struct column (add or remove).
class RecordSql {
 public:
  RecordSql(std::string column, const engine::DataType& type)
      : column_(std::move(column)), type_(type) {}

  bool Has(std::string_view field) const { return FindField(type_.children, field) != nullptr; }
  std::string Ref(std::string_view field) const {
    return "t." + Ident(column_) + "." + Ident(field);
  }
  // The field as text (NULL when the checkpoint lacks it).
  std::string Text(std::string_view field) const {
    return Has(field) ? Encode("CAST(" + Ref(field) + " AS VARCHAR)") : "'~'";
  }
  // The field as JSON text (maps: partitionValues, tags).
  std::string Json(std::string_view field) const {
    return Has(field) ? Encode("CAST(to_json(" + Ref(field) + ") AS VARCHAR)") : "'~'";
  }
  // True for rows that need the JSON parser.
  std::string NeedsJson() const {
    std::string cond = "false";
    if (Has("deletionVector")) cond += " OR " + Ref("deletionVector") + " IS NOT NULL";
    if (Has("stats_parsed")) {
      cond += " OR (" + Ref("stats_parsed") + " IS NOT NULL" +
              (Has("stats") ? " AND " + Ref("stats") + " IS NULL" : std::string()) + ")";
    }
    return cond;
  }
  // CASE producing the record: `tag` + fields, or lower(tag) + to_json(column).
  std::string Record(char tag, const std::vector<std::string>& fields) const {
    std::string fast = "'" + std::string(1, tag) + "'";
    for (const std::string& f : fields) fast += " || " + f;
    char slow_tag = static_cast<char>(tag - 'A' + 'a');
    return "CASE WHEN " + NeedsJson() + " THEN '" + std::string(1, slow_tag) + "' || " +
           Encode("CAST(to_json(t." + Ident(column_) + ") AS VARCHAR)") + " ELSE " + fast + " END";
  }

 private:
  std::string column_;
  const engine::DataType& type_;
};

// Reads the records produced by the query above.
class RecordReader {
 public:
  explicit RecordReader(std::string_view text) : text_(text) {}
  bool AtEnd() const { return pos_ >= text_.size(); }
  Result<char> Tag() {
    if (AtEnd()) return Status::Corruption("checkpoint record truncated");
    return text_[pos_++];
  }
  // One field: nullopt for NULL.
  Result<std::optional<std::string_view>> Field() {
    if (pos_ < text_.size() && text_[pos_] == '~') {
      ++pos_;
      return std::optional<std::string_view>();
    }
    size_t colon = text_.find(':', pos_);
    size_t len = 0;
    if (colon == std::string_view::npos ||
        std::from_chars(text_.data() + pos_, text_.data() + colon, len).ptr !=
            text_.data() + colon ||
        colon + 1 + len > text_.size()) {
      return Status::Corruption("checkpoint record is malformed at byte " + std::to_string(pos_));
    }
    std::string_view value = text_.substr(colon + 1, len);
    pos_ = colon + 1 + len;
    return std::optional<std::string_view>(value);
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

Status Missing(const char* action, const char* field) {
  return Status::Corruption(std::string(action) + " action is missing required field '" + field +
                            "'");
}

Result<int64_t> ToInt(std::string_view text, const char* action, const char* field) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc() && ptr == text.data() + text.size()) return v;
  // Floating-point columns (e.g. "1.0E3") are accepted as the JSON parser accepts them.
  std::string s(text);
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (!s.empty() && end == s.c_str() + s.size() && d >= -9.2233720368547758e18 &&
      d < 9.2233720368547758e18) {
    return static_cast<int64_t>(d);
  }
  return Status::Corruption(std::string(action) + " field '" + field + "' is not an integer: " + s);
}

Result<std::optional<int64_t>> OptInt(std::optional<std::string_view> text, const char* action,
                                      const char* field) {
  if (!text) return std::optional<int64_t>();
  SLUICE_ASSIGN_OR_RETURN(int64_t v, ToInt(*text, action, field));
  return std::optional<int64_t>(v);
}

Result<bool> ToBool(std::string_view text, const char* action, const char* field) {
  if (text == "true") return true;
  if (text == "false") return false;
  return Status::Corruption(std::string(action) + " field '" + field +
                            "' is not a boolean: " + std::string(text));
}

Result<std::map<std::string, std::optional<std::string>>> ToMap(
    std::optional<std::string_view> json_text, const char* field) {
  if (!json_text || *json_text == "{}" || *json_text == "null" || *json_text == "[]") {
    return std::map<std::string, std::optional<std::string>>();
  }
  return ParseStringMapJson(*json_text, field);
}

Result<AddFile> DecodeAdd(RecordReader* in) {
  AddFile a;
  SLUICE_ASSIGN_OR_RETURN(auto path, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto pv, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto size, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto mtime, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto data_change, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto stats, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto tags, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto base_row_id, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto row_commit_version, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto clustering, in->Field());
  if (!path) return Missing("add", "path");
  if (!size) return Missing("add", "size");
  if (!mtime) return Missing("add", "modificationTime");
  if (!data_change) return Missing("add", "dataChange");
  a.path = std::string(*path);
  SLUICE_ASSIGN_OR_RETURN(a.partition_values, ToMap(pv, "partitionValues"));
  SLUICE_ASSIGN_OR_RETURN(a.size, ToInt(*size, "add", "size"));
  SLUICE_ASSIGN_OR_RETURN(a.modification_time, ToInt(*mtime, "add", "modificationTime"));
  SLUICE_ASSIGN_OR_RETURN(a.data_change, ToBool(*data_change, "add", "dataChange"));
  if (stats) a.stats = std::string(*stats);
  SLUICE_ASSIGN_OR_RETURN(a.tags, ToMap(tags, "tags"));
  SLUICE_ASSIGN_OR_RETURN(a.base_row_id, OptInt(base_row_id, "add", "baseRowId"));
  SLUICE_ASSIGN_OR_RETURN(a.default_row_commit_version,
                          OptInt(row_commit_version, "add", "defaultRowCommitVersion"));
  if (clustering) a.clustering_provider = std::string(*clustering);
  return a;
}

Result<RemoveFile> DecodeRemove(RecordReader* in) {
  RemoveFile r;
  SLUICE_ASSIGN_OR_RETURN(auto path, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto deletion_ts, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto data_change, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto extended, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto pv, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto size, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto stats, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto tags, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto base_row_id, in->Field());
  SLUICE_ASSIGN_OR_RETURN(auto row_commit_version, in->Field());
  if (!path) return Missing("remove", "path");
  r.path = std::string(*path);
  SLUICE_ASSIGN_OR_RETURN(r.deletion_timestamp, OptInt(deletion_ts, "remove", "deletionTimestamp"));
  // dataChange is required by the protocol, but the oldest logs omit it.
  if (data_change) {
    SLUICE_ASSIGN_OR_RETURN(r.data_change, ToBool(*data_change, "remove", "dataChange"));
  }
  if (extended) {
    SLUICE_ASSIGN_OR_RETURN(bool e, ToBool(*extended, "remove", "extendedFileMetadata"));
    r.extended_file_metadata = e;
  }
  if (pv && *pv != "null") {
    SLUICE_ASSIGN_OR_RETURN(r.partition_values, ToMap(pv, "partitionValues"));
  }
  SLUICE_ASSIGN_OR_RETURN(r.size, OptInt(size, "remove", "size"));
  if (stats) r.stats = std::string(*stats);
  SLUICE_ASSIGN_OR_RETURN(r.tags, ToMap(tags, "tags"));
  SLUICE_ASSIGN_OR_RETURN(r.base_row_id, OptInt(base_row_id, "remove", "baseRowId"));
  SLUICE_ASSIGN_OR_RETURN(r.default_row_commit_version,
                          OptInt(row_commit_version, "remove", "defaultRowCommitVersion"));
  return r;
}

Status DecodeRecords(std::string_view text, std::vector<Action>* out) {
  // About 200 bytes per record (a path, a size, two times and stats): grow once, not log(n) times.
  out->reserve(out->size() + text.size() / 200 + 16);
  RecordReader in(text);
  while (!in.AtEnd()) {
    SLUICE_ASSIGN_OR_RETURN(char tag, in.Tag());
    if (tag == 'A') {
      SLUICE_ASSIGN_OR_RETURN(AddFile a, DecodeAdd(&in));
      out->push_back(std::move(a));
    } else if (tag == 'R') {
      SLUICE_ASSIGN_OR_RETURN(RemoveFile r, DecodeRemove(&in));
      out->push_back(std::move(r));
    } else if (tag == 'a' || tag == 'r') {
      SLUICE_ASSIGN_OR_RETURN(auto json_text, in.Field());
      if (!json_text) return Status::Corruption("checkpoint record without a value");
      std::string line =
          std::string(tag == 'a' ? "{\"add\":" : "{\"remove\":") + std::string(*json_text) + "}";
      SLUICE_ASSIGN_OR_RETURN(auto actions, ParseActions(line));
      for (Action& a : actions) out->push_back(std::move(a));
    } else {
      return Status::Corruption(std::string("checkpoint record has an unknown tag '") + tag + "'");
    }
  }
  return Status::OK();
}

// Rows rendered as JSON lines in one cell, parsed like a commit file.
Status ReadJsonRows(engine::Connection* conn, const std::string& sql, const std::string& ctx,
                    std::vector<Action>* out) {
  SLUICE_ASSIGN_OR_RETURN(engine::Batch rows, conn->Query(sql));
  for (int64_t r = 0; r < rows.num_rows(); ++r) {
    std::optional<std::string> text = rows.GetString(r, 0);
    if (!text) continue;
    SLUICE_ASSIGN_OR_RETURN(auto actions, ParseCommitFile(*text, ctx));
    for (Action& a : actions) out->push_back(std::move(a));
  }
  return Status::OK();
}

// Reads the Parquet checkpoint files `paths` into `out`: add/remove rows in bulk, the other rows
// as JSON lines. The paths of the sidecar files its `sidecar` rows name (V2 checkpoints) are
// appended to `sidecars` as the log writes them.
Status ReadParquetCheckpoint(engine::Connection* conn, const std::vector<std::string>& paths,
                             const std::string& ctx, std::vector<Action>* out,
                             std::vector<std::string>* sidecars) {
  std::string list = "[";
  for (size_t i = 0; i < paths.size(); ++i) {
    if (i > 0) list += ", ";
    list += QuoteLiteral(paths[i]);
  }
  list += "]";
  const std::string source =
      "read_parquet(" + list + ", union_by_name=true, hive_partitioning=false)";
  SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch empty,
                              conn->Query("SELECT * FROM " + source + " LIMIT 0"), ctx);
  const engine::Schema& columns = empty.schema();
  const engine::Field* add = FindField(columns, "add");
  const engine::Field* remove = FindField(columns, "remove");
  bool bulk = (add != nullptr || remove != nullptr) &&
              (add == nullptr || add->type.id == engine::TypeId::kStruct) &&
              (remove == nullptr || remove->type.id == engine::TypeId::kStruct);
  if (const engine::Field* sidecar = FindField(columns, "sidecar");
      sidecar != nullptr && sidecar->type.id == engine::TypeId::kStruct &&
      FindField(sidecar->type.children, "path") != nullptr) {
    SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch rows,
                                conn->Query("SELECT t.\"sidecar\".\"path\" FROM " + source +
                                            " t WHERE t.\"sidecar\" IS NOT NULL"),
                                ctx);
    for (int64_t r = 0; r < rows.num_rows(); ++r) {
      std::optional<std::string> path = rows.GetString(r, 0);
      if (!path) return Status::Corruption("sidecar action without a path").WithContext(ctx);
      sidecars->push_back(*path);
    }
  }
  if (!bulk) {
    // Unusual layout: every row as JSON.
    return ReadJsonRows(
               conn,
               "SELECT string_agg(CAST(to_json(t) AS VARCHAR), chr(10)) FROM " + source + " t", ctx,
               out)
        .WithContext(ctx);
  }

  // Everything but add/remove, as JSON lines.
  std::vector<std::string> others;
  for (const engine::Field& f : columns) {
    if (&f != add && &f != remove) others.push_back(Ident(f.name));
  }
  if (!others.empty()) {
    std::string select, where;
    for (const std::string& o : others) {
      select += (select.empty() ? "" : ", ") + o;
      where += (where.empty() ? "" : " OR ") + o + " IS NOT NULL";
    }
    SLUICE_RETURN_NOT_OK_CTX(
        ReadJsonRows(conn,
                     "SELECT string_agg(CAST(to_json(t) AS VARCHAR), chr(10)) FROM (SELECT " +
                         select + " FROM " + source + " WHERE " + where + ") t",
                     ctx, out),
        ctx);
  }

  // add and remove rows in bulk.
  std::string record = "CASE";
  std::string where;
  if (add != nullptr) {
    RecordSql a("add", add->type);
    record += " WHEN t.\"add\" IS NOT NULL THEN " +
              a.Record('A', {a.Text("path"), a.Json("partitionValues"), a.Text("size"),
                             a.Text("modificationTime"), a.Text("dataChange"), a.Text("stats"),
                             a.Json("tags"), a.Text("baseRowId"), a.Text("defaultRowCommitVersion"),
                             a.Text("clusteringProvider")});
    where = "t.\"add\" IS NOT NULL";
  }
  if (remove != nullptr) {
    RecordSql r("remove", remove->type);
    record += " WHEN t.\"remove\" IS NOT NULL THEN " +
              r.Record('R', {r.Text("path"), r.Text("deletionTimestamp"), r.Text("dataChange"),
                             r.Text("extendedFileMetadata"), r.Json("partitionValues"),
                             r.Text("size"), r.Text("stats"), r.Json("tags"), r.Text("baseRowId"),
                             r.Text("defaultRowCommitVersion")});
    where += std::string(where.empty() ? "" : " OR ") + "t.\"remove\" IS NOT NULL";
  }
  record += " END";
  std::string sql = "SELECT string_agg(" + record + ", '') FROM read_parquet(" + list +
                    ", union_by_name=true, hive_partitioning=false, filename=true, "
                    "file_row_number=true) t WHERE " +
                    where + " GROUP BY t.filename, t.file_row_number // " +
                    std::to_string(kRowsPerCell);
  SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch cells, conn->Query(sql), ctx);
  for (int64_t r = 0; r < cells.num_rows(); ++r) {
    std::optional<std::string> text = cells.GetString(r, 0);
    if (!text) continue;
    SLUICE_RETURN_NOT_OK_CTX(DecodeRecords(*text, out), ctx);
  }
  return Status::OK();
}

// The `sidecar` actions' paths of a V2 checkpoint in JSON (one action per line).
Result<std::vector<std::string>> JsonSidecars(std::string_view contents, const std::string& ctx) {
  std::vector<std::string> out;
  size_t line_no = 0;
  for (size_t pos = 0; pos < contents.size();) {
    size_t nl = contents.find('\n', pos);
    std::string_view line = contents.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    pos = nl == std::string_view::npos ? contents.size() : nl + 1;
    ++line_no;
    if (line.find("\"sidecar\"") == std::string_view::npos) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("sidecar")) continue;
    const nlohmann::json& sidecar = j["sidecar"];
    if (!sidecar.is_object() || !sidecar.contains("path") || !sidecar["path"].is_string()) {
      return Status::Corruption("sidecar action without a path at line " + std::to_string(line_no))
          .WithContext(ctx);
    }
    out.push_back(sidecar["path"].get<std::string>());
  }
  return out;
}

}  // namespace

Result<std::vector<Action>> ReadCheckpointActions(fs::FileSystem* fs, engine::Connection* conn,
                                                  const Checkpoint& checkpoint) {
  const LogFile& first = checkpoint.files.front();
  const std::string ctx = "reading checkpoint " + first.info.path;
  std::vector<Action> out;
  std::vector<std::string> sidecars;
  if (first.name.kind == LogFileKind::kCheckpointV2 && first.name.json) {
    SLUICE_ASSIGN_OR_RETURN_CTX(std::string contents, fs->ReadFile(first.info.path), ctx);
    SLUICE_ASSIGN_OR_RETURN(out, ParseCommitFile(contents, first.info.path));
    SLUICE_ASSIGN_OR_RETURN(sidecars, JsonSidecars(contents, ctx));
  } else {
    std::vector<std::string> paths;
    for (const LogFile& f : checkpoint.files) paths.push_back(f.info.path);
    SLUICE_RETURN_NOT_OK(ReadParquetCheckpoint(conn, paths, ctx, &out, &sidecars));
  }
  if (sidecars.empty()) return out;
  // V2: the adds and removes are in the sidecar files, named relative to _delta_log/_sidecars/
  // (or absolute); every one must exist, and a sidecar names no further sidecars.
  const std::string sidecar_dir = fs::JoinPath(fs::DirName(first.info.path), "_sidecars");
  std::vector<std::string> paths;
  for (const std::string& name : sidecars) {
    SLUICE_ASSIGN_OR_RETURN_CTX(std::string path, ResolveLogPath(sidecar_dir, name), ctx);
    SLUICE_ASSIGN_OR_RETURN_CTX(bool exists, fs->Exists(path), ctx);
    if (!exists) {
      return Status::Corruption("sidecar file " + path + " of checkpoint " + first.info.path +
                                " does not exist");
    }
    paths.push_back(std::move(path));
  }
  std::vector<std::string> nested;
  SLUICE_RETURN_NOT_OK(ReadParquetCheckpoint(conn, paths, ctx + " (sidecar files)", &out, &nested));
  if (!nested.empty()) {
    return Status::Corruption("a sidecar file of checkpoint " + first.info.path +
                              " names sidecar files itself");
  }
  return out;
}

}  // namespace sluice::delta
