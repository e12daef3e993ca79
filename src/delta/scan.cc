#include "delta/scan.h"

#include <cctype>
#include <map>
#include <set>
#include <utility>

#include "common/strings.h"
#include "delta/column_mapping.h"
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

// A row filter as SQL text: "b-e" per range (inclusive), comma separated.
std::string RangesText(const RowIndexSet& set) {
  std::string out;
  for (const RowRange& r : set.ranges) {
    if (!out.empty()) out += ',';
    out += std::to_string(r.begin) + "-" + std::to_string(r.end - 1);
  }
  return out;
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
    if (!spec.row_index_column.empty()) add_col("CAST(NULL AS BIGINT)", spec.row_index_column);
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
  bool any_filter = false;
  for (const FileToRead& f : files) any_filter |= f.row_filter != nullptr;
  const bool row_numbers = any_filter || !spec.row_index_column.empty();
  std::string source = "read_parquet(" + list +
                       ", union_by_name=true, hive_partitioning=false, filename='__sluice_file'" +
                       (row_numbers ? ", file_row_number=true" : "") + ")";

  // Which columns do the files have (by lower-case name -> actual name)?
  SLUICE_ASSIGN_OR_RETURN(engine::Batch probe, conn->Query("SELECT * FROM " + source + " LIMIT 0"));
  if (!spec.field_ids.empty()) {
    // Column mapping id: Sluice matches columns by physical name, which is right when each
    // file's field ids sit on the names the schema gives them (Delta writes both). Any field id
    // of the schema on another name in a file would be read wrongly: refused.
    std::string ids;
    for (const auto& [id, name] : spec.field_ids) {
      ids += (ids.empty() ? "" : ", ") + std::string("(") + std::to_string(id) + ", " +
             QuoteLiteral(name) + ")";
    }
    SLUICE_ASSIGN_OR_RETURN(
        engine::Batch bad,
        conn->Query("SELECT s.file_name, s.name, s.field_id, e.n FROM parquet_schema(" + list +
                    ") s JOIN (VALUES " + ids +
                    ") AS e(id, n) ON s.field_id = e.id WHERE s.name <> e.n LIMIT 1"));
    if (bad.num_rows() > 0) {
      return Status::NotSupported(
          "column mapping id: data file " + bad.GetString(0, 0).value_or("?") + " has field id " +
          bad.GetString(0, 2).value_or("?") + " on column '" + bad.GetString(0, 1).value_or("?") +
          "', the schema's physical name for it is '" + bad.GetString(0, 3).value_or("?") +
          "' (Sluice reads id-mode files by physical name)");
    }
  }
  std::map<std::string, std::string> file_cols;
  for (const engine::Field& f : probe.schema()) file_cols[Lower(f.name)] = f.name;

  // Column mapping: the name of each schema column in the files and in partitionValues.
  const engine::Schema& physical =
      spec.physical_schema.empty() ? spec.schema : spec.physical_schema;
  if (physical.size() != spec.schema.size()) {
    return Status::Internal("ReadSpec has " + std::to_string(spec.schema.size()) + " columns but " +
                            std::to_string(physical.size()) + " physical ones");
  }

  // Per-file constants: partition values and extras.
  std::vector<std::string> part_cols;  // partition columns in schema order (physical names)
  std::vector<const engine::Field*> part_fields;
  for (size_t i = 0; i < spec.schema.size(); ++i) {
    const engine::Field& f = spec.schema[i];
    if (partition_lower.count(Lower(f.name))) {
      part_cols.push_back(physical[i].name);
      part_fields.push_back(&f);
    }
  }
  std::string values;
  std::string drop_lists;  // "entry:ranges" of files whose rows are dropped, ';' separated
  std::string keep_lists;  // ... and of files of which only those rows are kept
  for (size_t n = 0; n < files.size(); ++n) {
    const FileToRead& file = files[n];
    std::string row = "(" + QuoteLiteral(file.path) + ", " + std::to_string(n);
    if (file.row_filter) {
      std::string& to = file.keep_only_filtered ? keep_lists : drop_lists;
      if (!to.empty()) to += ";";
      to += std::to_string(n) + ":" + RangesText(*file.row_filter);
    }
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
  std::string aliases = "__sluice_path, __sluice_entry";
  for (size_t i = 0; i < part_cols.size(); ++i) aliases += ", __p" + std::to_string(i);
  for (size_t i = 0; i < spec.extra_columns.size(); ++i) aliases += ", __e" + std::to_string(i);

  size_t part_index = 0;
  for (size_t i = 0; i < spec.schema.size(); ++i) {
    const engine::Field& f = spec.schema[i];
    if (partition_lower.count(Lower(f.name))) {
      add_col("__f.__p" + std::to_string(part_index++), f.name);
      continue;
    }
    auto it = file_cols.find(Lower(physical[i].name));
    if (it == file_cols.end() || f.type.id == engine::TypeId::kNull) {
      add_col(CastNull(f.type), f.name);
    } else {
      // Read under the physical shape (nested physical names), then rename into the logical one.
      std::string read =
          "CAST(d." + QuoteIdentifier(it->second) + " AS " + physical[i].type.ToSql() + ")";
      SLUICE_ASSIGN_OR_RETURN_CTX(std::string expr,
                                  PhysicalToLogicalSql(read, physical[i].type, f.type),
                                  "column '" + f.name + "'");
      add_col(expr, f.name);
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
  if (!spec.row_index_column.empty()) add_col("d.file_row_number", spec.row_index_column);
  // Row filters: each filtered entry's row index ranges in one constant per kind, checked row by
  // row by the engine's sluice_row_listed (engine/row_lists.h; far cheaper than an anti join of
  // every row against the expanded (entry, row) pairs).
  auto listed = [](const std::string& lists) {
    return "sluice_row_listed(__f.__sluice_entry, d.file_row_number, " + QuoteLiteral(lists) + ")";
  };
  std::string filters;
  if (!drop_lists.empty()) filters += " WHERE NOT " + listed(drop_lists);
  if (!keep_lists.empty()) {
    // Entries without a keep filter pass; filtered entries keep only their listed rows.
    std::string kept;
    for (size_t n = 0; n < files.size(); ++n) {
      if (files[n].row_filter && files[n].keep_only_filtered) {
        kept += (kept.empty() ? "" : ", ") + std::to_string(n);
      }
    }
    filters += std::string(filters.empty() ? " WHERE " : " AND ") + "(" + listed(keep_lists) +
               " OR __f.__sluice_entry NOT IN (" + kept + "))";
  }
  return "SELECT * FROM (SELECT " + select + " FROM " + source + " d JOIN (VALUES " + values +
         ") AS __f(" + aliases + ") ON d.__sluice_file = __f.__sluice_path" + filters + ") WHERE " +
         spec.where_sql;
}

Result<engine::Batch> ReadFiles(engine::Connection* conn, const ReadSpec& spec,
                                const std::vector<FileToRead>& files) {
  SLUICE_ASSIGN_OR_RETURN(std::string sql, BuildReadSql(conn, spec, files));
  return conn->Query(sql);
}

Result<FileToRead> FileToReadForAdd(DeletionVectorLoader* dvs, const std::string& table_root,
                                    const AddFile& add, std::vector<std::string> extra_values) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, ResolveLogPath(table_root, add.path));
  FileToRead read{path, add.partition_values, std::move(extra_values)};
  if (add.deletion_vector) {
    SLUICE_ASSIGN_OR_RETURN(read.row_filter, dvs->Load(*add.deletion_vector, add.path));
  }
  return read;
}

Result<ReadSpec> ReadSpecForTable(const DeltaSchema& schema, const Metadata& metadata) {
  ReadSpec spec;
  spec.schema = schema.fields;
  spec.partition_columns = metadata.partition_columns;
  SLUICE_ASSIGN_OR_RETURN(ColumnMappingMode mode, ColumnMappingModeOf(metadata));
  if (mode != ColumnMappingMode::kNone) {
    SLUICE_ASSIGN_OR_RETURN(spec.physical_schema, PhysicalSchema(schema, mode));
  }
  if (mode == ColumnMappingMode::kId) spec.field_ids = PhysicalNamesById(schema);
  return spec;
}

Result<std::vector<AddFile>> PlanScanFiles(const Snapshot& snapshot, const ScanFilter& filter) {
  if (filter.conjuncts.empty()) return snapshot.files.ToVector();
  // Stats and partition values are keyed by physical names under column mapping: prune with
  // the physical schema and the filter's columns renamed to their physical names (a column the
  // schema lacks keeps its name: the pruner reports it unknown).
  SLUICE_ASSIGN_OR_RETURN(engine::Schema physical,
                          PhysicalSchemaOf(snapshot.schema, snapshot.metadata));
  ScanFilter physical_filter = filter;
  for (ColumnPredicate& c : physical_filter.conjuncts) {
    c.column = PhysicalColumnName(snapshot.schema.fields, physical, c.column).value_or(c.column);
  }
  const std::vector<std::string> partition_columns = PhysicalPartitionColumns(
      snapshot.schema.fields, physical, snapshot.metadata.partition_columns);
  const FilePruner pruner(physical_filter, physical, partition_columns);
  std::vector<AddFile> out;
  for (const Snapshot::FileList::Entry& e : snapshot.files.entries()) {
    SLUICE_ASSIGN_OR_RETURN(bool keep, pruner.MayMatch(e->value, e->memo.Get(e->value)));
    if (keep) out.push_back(e->value);
  }
  return out;
}

namespace {

Result<std::pair<ReadSpec, std::vector<FileToRead>>> PlanRead(fs::FileSystem* fs,
                                                              const Snapshot& snapshot,
                                                              const ScanFilter& filter,
                                                              std::vector<AddFile>* files_read) {
  std::string ctx =
      "scanning " + snapshot.table_root + " at version " + snapshot.version.ToString();
  SLUICE_ASSIGN_OR_RETURN_CTX(std::vector<AddFile> files, PlanScanFiles(snapshot, filter), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(ReadSpec spec, ReadSpecForTable(snapshot.schema, snapshot.metadata),
                              ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(spec.where_sql, FilterToSql(filter, spec.schema), ctx);
  std::vector<FileToRead> reads;
  DeletionVectorLoader dvs(fs, snapshot.table_root);
  for (const AddFile& f : files) {
    SLUICE_ASSIGN_OR_RETURN_CTX(FileToRead read, FileToReadForAdd(&dvs, snapshot.table_root, f),
                                ctx);
    reads.push_back(std::move(read));
  }
  if (files_read) *files_read = std::move(files);
  return std::make_pair(std::move(spec), std::move(reads));
}

}  // namespace

Result<std::string> ScanSnapshotSql(engine::Connection* conn, fs::FileSystem* fs,
                                    const Snapshot& snapshot, const ScanFilter& filter) {
  SLUICE_ASSIGN_OR_RETURN(auto plan, PlanRead(fs, snapshot, filter, nullptr));
  auto sql = BuildReadSql(conn, plan.first, plan.second);
  if (!sql.ok()) {
    return sql.status().WithContext("scanning " + snapshot.table_root + " at version " +
                                    snapshot.version.ToString());
  }
  return sql;
}

Result<engine::Batch> ScanSnapshot(engine::Connection* conn, fs::FileSystem* fs,
                                   const Snapshot& snapshot, const ScanFilter& filter,
                                   std::vector<AddFile>* files_read) {
  SLUICE_ASSIGN_OR_RETURN(auto plan, PlanRead(fs, snapshot, filter, files_read));
  auto batch = ReadFiles(conn, plan.first, plan.second);
  if (!batch.ok()) {
    return batch.status().WithContext("scanning " + snapshot.table_root + " at version " +
                                      snapshot.version.ToString());
  }
  return batch;
}

}  // namespace sluice::delta
