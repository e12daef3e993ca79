#include "delta/scan.h"

#include <cctype>
#include <map>
#include <set>
#include <utility>

#include "common/strings.h"
#include "delta/paths.h"
#include "delta/schema.h"
#include "delta/values.h"

namespace sluice::delta {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const std::optional<std::string>* FindPartitionValue(const PartitionValues& values,
                                                     const std::string& column) {
  auto it = values.find(column);
  if (it != values.end()) return &it->second;
  for (const auto& [k, v] : values) {
    if (Lower(k) == Lower(column)) return &v;
  }
  return nullptr;
}

std::string CastNull(const engine::DataType& type) {
  if (type.id == engine::TypeId::kNull) return "NULL";
  return "CAST(NULL AS " + type.ToSql() + ")";
}

}  // namespace

Result<std::string> BuildReadSql(engine::Connection* conn, const ReadSpec& spec,
                                 const std::vector<FileToRead>& files) {
  std::set<std::string> partition_lower;
  for (const std::string& p : spec.partition_columns) partition_lower.insert(Lower(p));

  std::string select;
  auto add_col = [&](const std::string& expr, const std::string& name) {
    if (!select.empty()) select += ", ";
    select += expr + " AS " + QuoteIdentifier(name);
  };

  if (files.empty()) {
    for (const engine::Field& f : spec.schema) add_col(CastNull(f.type), f.name);
    for (const engine::Field& f : spec.extra_columns) add_col(CastNull(f.type), f.name);
    if (select.empty()) return std::string("SELECT 1 WHERE FALSE");
    return "SELECT * FROM (SELECT " + select + ") WHERE FALSE";
  }

  // Distinct paths for read_parquet (a file listed twice would be read twice).
  std::vector<std::string> paths;
  std::set<std::string> seen;
  for (const FileToRead& f : files) {
    if (seen.insert(f.path).second) paths.push_back(f.path);
  }
  std::string list = "[";
  for (size_t i = 0; i < paths.size(); ++i) {
    if (i > 0) list += ", ";
    list += QuoteLiteral(paths[i]);
  }
  list += "]";
  std::string source = "read_parquet(" + list +
                       ", union_by_name=true, hive_partitioning=false, filename='__sluice_file')";

  // Which columns do the files have (by lower-case name -> actual name)?
  SLUICE_ASSIGN_OR_RETURN(engine::Batch probe, conn->Query("SELECT * FROM " + source + " LIMIT 0"));
  std::map<std::string, std::string> file_cols;
  for (const engine::Field& f : probe.schema()) file_cols[Lower(f.name)] = f.name;

  // Per-file constants: partition values and extras.
  std::vector<std::string> part_cols;  // partition columns in schema order
  std::vector<const engine::Field*> part_fields;
  for (const engine::Field& f : spec.schema) {
    if (partition_lower.count(Lower(f.name))) {
      part_cols.push_back(f.name);
      part_fields.push_back(&f);
    }
  }
  std::string values;
  for (const FileToRead& file : files) {
    std::string row = "(" + QuoteLiteral(file.path);
    for (size_t i = 0; i < part_cols.size(); ++i) {
      const std::optional<std::string>* v = FindPartitionValue(file.partition_values, part_cols[i]);
      std::optional<std::string> value = v ? *v : std::nullopt;
      auto expr = PartitionValueSql(value, part_fields[i]->type);
      if (!expr.ok()) {
        return expr.status().WithContext("partition column '" + part_cols[i] + "' of " + file.path);
      }
      row += ", " + *expr;
    }
    if (file.extra_values.size() != spec.extra_columns.size()) {
      return Status::Internal("FileToRead has " + std::to_string(file.extra_values.size()) +
                              " extra values, spec " + std::to_string(spec.extra_columns.size()));
    }
    for (const std::string& e : file.extra_values) row += ", " + e;
    row += ")";
    if (!values.empty()) values += ", ";
    values += row;
  }
  std::string aliases = "__sluice_path";
  for (size_t i = 0; i < part_cols.size(); ++i) aliases += ", __p" + std::to_string(i);
  for (size_t i = 0; i < spec.extra_columns.size(); ++i) aliases += ", __e" + std::to_string(i);

  size_t part_index = 0;
  for (const engine::Field& f : spec.schema) {
    if (partition_lower.count(Lower(f.name))) {
      add_col("__f.__p" + std::to_string(part_index++), f.name);
      continue;
    }
    auto it = file_cols.find(Lower(f.name));
    if (it == file_cols.end() || f.type.id == engine::TypeId::kNull) {
      add_col(CastNull(f.type), f.name);
    } else {
      add_col("CAST(d." + QuoteIdentifier(it->second) + " AS " + f.type.ToSql() + ")", f.name);
    }
  }
  for (size_t i = 0; i < spec.extra_columns.size(); ++i) {
    const engine::Field& f = spec.extra_columns[i];
    std::string expr = "__f.__e" + std::to_string(i);
    bool from_file = false;
    for (const std::string& n : spec.extra_from_file) from_file |= Lower(n) == Lower(f.name);
    auto it = file_cols.find(Lower(f.name));
    if (from_file && it != file_cols.end()) {
      expr = "COALESCE(" + expr + ", CAST(d." + QuoteIdentifier(it->second) + " AS " +
             f.type.ToSql() + "))";
    }
    add_col(expr, f.name);
  }
  return "SELECT * FROM (SELECT " + select + " FROM " + source + " d JOIN (VALUES " + values +
         ") AS __f(" + aliases + ") ON d.__sluice_file = __f.__sluice_path) WHERE " +
         spec.where_sql;
}

Result<engine::Batch> ReadFiles(engine::Connection* conn, const ReadSpec& spec,
                                const std::vector<FileToRead>& files) {
  SLUICE_ASSIGN_OR_RETURN(std::string sql, BuildReadSql(conn, spec, files));
  return conn->Query(sql);
}

Result<std::vector<AddFile>> PlanScanFiles(const Snapshot& snapshot, const ScanFilter& filter) {
  std::vector<AddFile> out;
  for (const AddFile& f : snapshot.files) {
    SLUICE_ASSIGN_OR_RETURN(bool keep, FileMayMatch(f, filter, snapshot.schema.fields,
                                                    snapshot.metadata.partition_columns));
    if (keep) out.push_back(f);
  }
  return out;
}

namespace {

Result<std::pair<ReadSpec, std::vector<FileToRead>>> PlanRead(const Snapshot& snapshot,
                                                              const ScanFilter& filter,
                                                              std::vector<AddFile>* files_read) {
  std::string ctx =
      "scanning " + snapshot.table_root + " at version " + snapshot.version.ToString();
  SLUICE_ASSIGN_OR_RETURN_CTX(std::vector<AddFile> files, PlanScanFiles(snapshot, filter), ctx);
  ReadSpec spec;
  spec.schema = snapshot.schema.fields;
  spec.partition_columns = snapshot.metadata.partition_columns;
  SLUICE_ASSIGN_OR_RETURN_CTX(spec.where_sql, FilterToSql(filter, spec.schema), ctx);
  std::vector<FileToRead> reads;
  for (const AddFile& f : files) {
    SLUICE_ASSIGN_OR_RETURN_CTX(std::string path, ResolveLogPath(snapshot.table_root, f.path), ctx);
    reads.push_back(FileToRead{path, f.partition_values, {}});
  }
  if (files_read) *files_read = std::move(files);
  return std::make_pair(std::move(spec), std::move(reads));
}

}  // namespace

Result<std::string> ScanSnapshotSql(engine::Connection* conn, const Snapshot& snapshot,
                                    const ScanFilter& filter) {
  SLUICE_ASSIGN_OR_RETURN(auto plan, PlanRead(snapshot, filter, nullptr));
  auto sql = BuildReadSql(conn, plan.first, plan.second);
  if (!sql.ok()) {
    return sql.status().WithContext("scanning " + snapshot.table_root + " at version " +
                                    snapshot.version.ToString());
  }
  return sql;
}

Result<engine::Batch> ScanSnapshot(engine::Connection* conn, const Snapshot& snapshot,
                                   const ScanFilter& filter, std::vector<AddFile>* files_read) {
  SLUICE_ASSIGN_OR_RETURN(auto plan, PlanRead(snapshot, filter, files_read));
  auto batch = ReadFiles(conn, plan.first, plan.second);
  if (!batch.ok()) {
    return batch.status().WithContext("scanning " + snapshot.table_root + " at version " +
                                      snapshot.version.ToString());
  }
  return batch;
}

}  // namespace sluice::delta
