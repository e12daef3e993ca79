#include "cli/table_commands.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "delta/describe.h"
#include "delta/optimize.h"
#include "delta/table.h"
#include "delta/table_writer.h"
#include "delta/vacuum.h"
#include "delta/warehouse_tables.h"
#include "engine/engine.h"
#include "fs/file_system.h"
#include "fs/routing_file_system.h"

namespace sluice::cli {
namespace {

using Json = nlohmann::ordered_json;

// An engine and connection for one command, and the table's file system.
struct TableEnv {
  std::string path;  // the table's directory (the argument, or the warehouse table it names)
  std::shared_ptr<fs::FileSystem> fs;
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<engine::Connection> conn;
};

// The table's directory: `table` when it exists as a path, else the warehouse table of that
// name (delta/warehouse_tables.h); NotFound naming both places when neither exists.
Result<std::string> ResolveTable(fs::FileSystem* fs, const TableCommandOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(bool exists, fs->Exists(options.path));
  if (exists) return options.path;
  if (!delta::CheckWarehouseTableName(options.path).ok()) {
    return Status::NotFound(options.path + " does not exist");
  }
  SLUICE_ASSIGN_OR_RETURN(std::string dir,
                          delta::ResolveWarehouseTable(fs, options.warehouse, options.path));
  SLUICE_ASSIGN_OR_RETURN(bool in_warehouse, fs->Exists(dir));
  if (!in_warehouse) {
    return Status::NotFound("no directory " + options.path + " and no table '" + options.path +
                            "' in the warehouse " + options.warehouse + " (--warehouse)");
  }
  return dir;
}

// Finds the table (a path or a warehouse table's name), checks that it is a Delta table (clear
// errors for the usual mistakes) and opens an engine.
Result<TableEnv> Open(const TableCommandOptions& options) {
  TableEnv env;
  env.fs = fs::PathFileSystem();
  SLUICE_ASSIGN_OR_RETURN(env.path, ResolveTable(env.fs.get(), options));
  SLUICE_ASSIGN_OR_RETURN(bool has_log, env.fs->Exists(fs::JoinPath(env.path, "_delta_log")));
  if (!has_log) {
    return Status::InvalidArgument(env.path +
                                   " is not a Delta table (it has no _delta_log directory)");
  }
  SLUICE_ASSIGN_OR_RETURN(env.engine, engine::Engine::Open());
  SLUICE_ASSIGN_OR_RETURN(env.conn, env.engine->Connect());
  return env;
}

// The rows of `batch` as JSON objects (DuckDB's to_json: maps become objects, lists arrays).
Result<std::vector<Json>> RowsAsJson(engine::Connection* conn, const engine::Batch& batch) {
  SLUICE_RETURN_NOT_OK(conn->RegisterBatch("__sluice_rows", batch));
  Result<engine::Batch> rows = conn->Query("SELECT to_json(r)::VARCHAR FROM __sluice_rows AS r");
  (void)conn->UnregisterBatch("__sluice_rows");
  SLUICE_RETURN_NOT_OK(rows.status());
  std::vector<Json> out;
  for (int64_t i = 0; i < rows->num_rows(); ++i) {
    std::optional<std::string> text = rows->GetString(i, 0);
    Json row = Json::parse(text.value_or("null"), nullptr, /*allow_exceptions=*/false);
    if (row.is_discarded()) return Status::Internal("to_json gave text that is not JSON");
    out.push_back(std::move(row));
  }
  return out;
}

std::string Text(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// "k=v, k=v" of a JSON object (a MAP column), keys sorted as DuckDB keeps them.
std::string Pairs(const Json& map, const std::vector<std::string>* only = nullptr) {
  std::string out;
  if (!map.is_object()) return out;
  for (const auto& [k, v] : map.items()) {
    if (only && std::find(only->begin(), only->end(), k) == only->end()) continue;
    if (!out.empty()) out += ", ";
    out += k + "=" + Text(v);
  }
  return out;
}

std::string Bytes(int64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[48];
  if (u == 0) {
    std::snprintf(buf, sizeof(buf), "%lld B", static_cast<long long>(n));
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f %s (%lld bytes)", v, units[u], static_cast<long long>(n));
  }
  return buf;
}

// "2026-11-30 19:00:00.123+00" -> "2026-11-30 19:00:00.123 UTC".
std::string Utc(const Json& v) {
  std::string t = Text(v);
  if (t.size() > 3 && t.compare(t.size() - 3, 3, "+00") == 0)
    t = t.substr(0, t.size() - 3) + " UTC";
  return t;
}

// The operation metrics worth a glance: rows and files written, changed or removed.
const std::vector<std::string> kSummaryMetrics = {
    "numOutputRows",   "numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted",
    "numUpdatedRows",  "numDeletedRows",        "numCopiedRows",        "numFiles",
    "numAddedFiles",   "numRemovedFiles",       "numDeletedFiles",      "numFilesToDelete",
    "numRestoredFiles"};

int Fail(const Status& st, std::ostream& err) {
  err << "Error: " << st.ToString() << "\n";
  return 1;
}

}  // namespace

int RunTableHistory(const TableCommandOptions& options, std::ostream& out, std::ostream& err) {
  Result<TableEnv> env = Open(options);
  if (!env.ok()) return Fail(env.status(), err);
  if (options.limit && *options.limit < 1) {
    return Fail(Status::InvalidArgument("--limit must be at least 1"), err);
  }
  Result<std::unique_ptr<delta::DeltaTable>> table =
      delta::DeltaTable::Open(env->fs, env->engine.get(), env->path);
  if (!table.ok()) return Fail(table.status(), err);
  std::optional<size_t> limit;
  if (options.limit) limit = static_cast<size_t>(*options.limit);
  Result<engine::Batch> history = delta::DescribeHistory(table->get(), env->conn.get(), limit);
  if (!history.ok()) return Fail(history.status(), err);
  Result<std::vector<Json>> rows = RowsAsJson(env->conn.get(), *history);
  if (!rows.ok()) return Fail(rows.status(), err);
  std::sort(rows->begin(), rows->end(), [](const Json& a, const Json& b) {
    return a["version"].get<int64_t>() > b["version"].get<int64_t>();
  });
  if (options.json) {
    out << Json(*rows).dump(2) << "\n";
    return 0;
  }
  // An aligned table: version, timestamp, operation, parameters, metrics.
  std::vector<std::vector<std::string>> cells = {
      {"version", "timestamp", "operation", "parameters", "metrics"}};
  for (const Json& r : *rows) {
    cells.push_back({Text(r["version"]), Utc(r["timestamp"]), Text(r["operation"]),
                     Pairs(r["operationParameters"]),
                     Pairs(r["operationMetrics"], &kSummaryMetrics)});
  }
  std::vector<size_t> width(5, 0);
  for (const auto& row : cells) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : cells) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
  out << "(" << rows->size() << (rows->size() == 1 ? " version" : " versions") << ")\n";
  return 0;
}

int RunTableDetail(const TableCommandOptions& options, std::ostream& out, std::ostream& err) {
  Result<TableEnv> env = Open(options);
  if (!env.ok()) return Fail(env.status(), err);
  Result<std::unique_ptr<delta::DeltaTable>> table =
      delta::DeltaTable::Open(env->fs, env->engine.get(), env->path);
  if (!table.ok()) return Fail(table.status(), err);
  Result<engine::Batch> detail = delta::DescribeDetail(table->get(), env->conn.get());
  if (!detail.ok()) return Fail(detail.status(), err);
  Result<std::vector<Json>> rows = RowsAsJson(env->conn.get(), *detail);
  if (!rows.ok()) return Fail(rows.status(), err);
  if (rows->size() != 1) return Fail(Status::Internal("DESCRIBE DETAIL gave no row"), err);
  const Json& d = rows->front();
  if (options.json) {
    out << d.dump(2) << "\n";
    return 0;
  }
  auto list = [](const Json& v) {
    if (!v.is_array() || v.empty()) return std::string("none");
    std::string s;
    for (const Json& e : v) s += (s.empty() ? "" : ", ") + Text(e);
    return s;
  };
  out << "format:             " << Text(d["format"]) << "\n";
  out << "id:                 " << Text(d["id"]) << "\n";
  if (!d["name"].is_null()) out << "name:               " << Text(d["name"]) << "\n";
  if (!d["description"].is_null()) {
    out << "description:        " << Text(d["description"]) << "\n";
  }
  out << "location:           " << Text(d["location"]) << "\n";
  out << "created at:         " << Utc(d["createdAt"]) << "\n";
  out << "last modified:      " << Utc(d["lastModified"]) << "\n";
  out << "partition columns:  " << list(d["partitionColumns"]) << "\n";
  out << "files:              " << Text(d["numFiles"]) << "\n";
  out << "size:               "
      << (d["sizeInBytes"].is_number() ? Bytes(d["sizeInBytes"].get<int64_t>())
                                       : Text(d["sizeInBytes"]))
      << "\n";
  out << "min reader version: " << Text(d["minReaderVersion"]) << "\n";
  out << "min writer version: " << Text(d["minWriterVersion"]) << "\n";
  out << "table features:     " << list(d["tableFeatures"]) << "\n";
  out << "properties:";
  if (!d["properties"].is_object() || d["properties"].empty()) {
    out << "         none\n";
  } else {
    out << "\n";
    for (const auto& [k, v] : d["properties"].items()) out << "  " << k << " = " << Text(v) << "\n";
  }
  return 0;
}

int RunTableVacuum(const TableCommandOptions& options, std::ostream& out, std::ostream& err) {
  Result<TableEnv> env = Open(options);
  if (!env.ok()) return Fail(env.status(), err);
  Result<std::unique_ptr<delta::DeltaTableWriter>> writer =
      delta::DeltaTableWriter::Open(env->fs, env->engine.get(), env->path);
  if (!writer.ok()) return Fail(writer.status(), err);
  delta::DmlTable table{writer->get(), env->fs, env->engine.get(), env->conn.get()};
  delta::VacuumOptions vacuum;
  vacuum.retain_hours = options.retain_hours;
  vacuum.dry_run = options.dry_run;
  vacuum.retention_duration_check = !options.force;
  Result<delta::VacuumResult> result = delta::Vacuum(table, vacuum);
  if (!result.ok()) {
    Status st = result.status().WithContext("VACUUM " + env->path);
    if (st.message().find("low retention period") != std::string::npos) {
      st = Status(st.code(), st.message() +
                                 " (sluice table vacuum: pass --force to vacuum with this "
                                 "retention anyway)");
    }
    return Fail(st, err);
  }
  if (options.json) {
    Json j;
    j["path"] = env->path;
    j["dryRun"] = options.dry_run;
    j["retainHours"] = options.retain_hours ? Json(*options.retain_hours) : Json(nullptr);
    j["numFiles"] = result->files.size();
    j["bytes"] = result->bytes;
    j["files"] = result->files;
    j["startVersion"] =
        result->start_version ? Json(result->start_version->value()) : Json(nullptr);
    j["endVersion"] = result->end_version ? Json(result->end_version->value()) : Json(nullptr);
    out << j.dump(2) << "\n";
    return 0;
  }
  std::string retention = "the table's retention";
  if (options.retain_hours) {
    char hours[32];
    std::snprintf(hours, sizeof(hours), "%g", *options.retain_hours);
    retention = std::string(hours) + " hours";
  }
  if (options.dry_run) {
    out << "dry run: would delete " << result->files.size()
        << (result->files.size() == 1 ? " file" : " files") << " (" << Bytes(result->bytes)
        << ") not needed within " << retention << "\n";
    for (const std::string& f : result->files) out << "  " << f << "\n";
    return 0;
  }
  out << "deleted " << result->files.size() << (result->files.size() == 1 ? " file" : " files")
      << " (" << Bytes(result->bytes) << ")";
  if (result->start_version && result->end_version) {
    out << "; logged as VACUUM START (version " << result->start_version->value()
        << ") and VACUUM END (version " << result->end_version->value() << ")";
  }
  out << "\n";
  return 0;
}

int RunTableOptimize(const TableCommandOptions& options, std::ostream& out, std::ostream& err) {
  Result<TableEnv> env = Open(options);
  if (!env.ok()) return Fail(env.status(), err);
  Result<std::unique_ptr<delta::DeltaTableWriter>> writer =
      delta::DeltaTableWriter::Open(env->fs, env->engine.get(), env->path);
  if (!writer.ok()) return Fail(writer.status(), err);
  delta::DmlTable table{writer->get(), env->fs, env->engine.get(), env->conn.get()};
  delta::OptimizeOptions optimize;
  optimize.partition_predicate = options.where;
  Result<delta::DmlResult> result = delta::Optimize(table, optimize);
  if (!result.ok()) return Fail(result.status().WithContext("OPTIMIZE " + env->path), err);
  auto metric = [&](const char* name) -> int64_t {
    auto it = result->metrics.find(name);
    return it == result->metrics.end() ? 0 : it->second;
  };
  if (options.json) {
    Json j;
    j["path"] = env->path;
    j["version"] = result->version ? Json(result->version->value()) : Json(nullptr);
    j["metrics"] = Json::object();
    for (const auto& [k, v] : result->metrics) j["metrics"][k] = v;
    out << j.dump(2) << "\n";
    return 0;
  }
  if (!result->version) {
    out << "nothing to compact: no partition has two or more files smaller than the target\n";
    return 0;
  }
  out << "compacted " << metric("numRemovedFiles") << " files (" << Bytes(metric("numRemovedBytes"))
      << ") into " << metric("numAddedFiles") << " (" << Bytes(metric("numAddedBytes"))
      << "); version " << result->version->value() << "\n";
  return 0;
}

}  // namespace sluice::cli
