#include "delta/file_writer.h"

#include <set>

#include "common/strings.h"
#include "common/uuid.h"
#include "delta/paths.h"
#include "delta/stats.h"
#include "delta/values.h"
#include "delta/write_util.h"

namespace sluice::delta {

namespace {

// The log's text for a partition value rendered by CAST(... AS VARCHAR) in UTC.
std::optional<std::string> PartitionText(const engine::DataType& type,
                                         std::optional<std::string> v) {
  if (!v || v->empty()) return std::nullopt;
  if (type.id == engine::TypeId::kTimestampTz) {
    // "2024-01-02 03:04:05.123+00" -> ISO-8601 "2024-01-02T03:04:05.123000Z".
    std::string s = *v;
    if (s.size() >= 3 && (s.compare(s.size() - 3, 3, "+00") == 0)) s.resize(s.size() - 3);
    if (s.size() >= 19 && s[10] == ' ') {
      s[10] = 'T';
      std::string frac = s.size() > 20 ? s.substr(20) : "";
      while (frac.size() < 6) frac += '0';
      s = s.substr(0, 19) + "." + frac + "Z";
    }
    return s;
  }
  return v;
}

}  // namespace

Result<AddFile> WriteOneDataFile(engine::Connection* conn, fs::FileSystem* fs,
                                 const std::string& table_root, const std::string& relative_dir,
                                 int file_index, const engine::Batch& batch,
                                 const engine::Schema& file_schema,
                                 const PartitionValues& partition_values,
                                 const DataFileOptions& options) {
  std::string name = DataFileName(file_index, NewUuidV4(), options.compression);
  std::string rel = relative_dir.empty() ? name : relative_dir + "/" + name;
  std::string final_path = fs::JoinPath(table_root, rel);
  std::string dir = fs::DirName(final_path);
  SLUICE_RETURN_NOT_OK(fs->CreateDirectories(dir));
  engine::ParquetWriteOptions pw;
  pw.compression = options.compression;
  pw.row_group_size = options.row_group_size;
  std::vector<engine::ParquetFieldId> ids;
  for (const engine::ParquetFieldId& id : options.field_ids) {
    for (const engine::Field& f : file_schema) {
      if (f.name == id.name) ids.push_back(id);
    }
  }
  // Under the final name: the name is fresh (a new UUID) and no commit names it yet.
  auto written = engine::WriteParquetWithFieldIds(conn, batch, final_path, pw, ids);
  if (!written.ok()) {
    (void)fs->DeleteFile(final_path);
    return written.status();
  }
  if (options.sync && options.background_sync == nullptr) {
    Status synced = fs->SyncFile(final_path);
    if (synced.ok()) synced = fs->SyncDirectory(dir);
    if (!synced.ok()) {
      (void)fs->DeleteFile(final_path);
      return synced;
    }
  }
  auto info = fs->Stat(final_path);
  if (!info.ok()) {
    (void)fs->DeleteFile(final_path);
    return info.status();
  }
  AddFile add;
  add.path = EncodeLogPath(rel);
  add.partition_values = partition_values;
  add.size = info->size;
  add.modification_time = info->mtime_ms;
  add.data_change = options.data_change;
  auto stats = BuildStatsJson(file_schema, *written, options.num_indexed_cols);
  if (!stats.ok()) {
    (void)fs->DeleteFile(final_path);
    return stats.status().WithContext("statistics of " + final_path);
  }
  add.stats = *stats;
  return add;
}

Result<std::vector<AddFile>> WriteDataFiles(engine::Connection* conn, fs::FileSystem* fs,
                                            const std::string& table_root,
                                            const engine::Batch& data,
                                            const engine::Schema& table_schema,
                                            const std::vector<std::string>& partition_columns,
                                            const DataFileOptions& options) {
  std::vector<AddFile> adds;
  if (data.num_rows() == 0) return adds;
  auto fail = [&](const Status& st) -> Status {
    for (const AddFile& a : adds) {
      auto decoded = PercentDecode(a.path);
      if (decoded.ok()) (void)fs->DeleteFile(fs::JoinPath(table_root, *decoded));
    }
    return st.WithContext("writing data files of Delta table " + table_root);
  };
  int index = 0;
  auto write_sliced = [&](const engine::Batch& b, const std::string& dir,
                          const engine::Schema& file_schema, const PartitionValues& pv) -> Status {
    int64_t step = options.max_rows_per_file > 0 ? options.max_rows_per_file : b.num_rows();
    for (int64_t off = 0; off < b.num_rows(); off += step) {
      engine::Batch slice = (off == 0 && step >= b.num_rows()) ? b : b.Slice(off, step);
      SLUICE_ASSIGN_OR_RETURN(AddFile add, WriteOneDataFile(conn, fs, table_root, dir, index++,
                                                            slice, file_schema, pv, options));
      adds.push_back(std::move(add));
    }
    return Status::OK();
  };

  // With background_sync, the files are synced on another thread once all are written.
  auto finish = [&]() -> Result<std::vector<AddFile>> {
    if (options.sync && options.background_sync != nullptr) {
      std::vector<std::string> files;
      for (const AddFile& a : adds) {
        auto decoded = PercentDecode(a.path);
        if (!decoded.ok()) return fail(decoded.status());
        files.push_back(fs::JoinPath(table_root, *decoded));
      }
      *options.background_sync = DataFileSync::Start(fs, std::move(files));
    }
    return std::move(adds);
  };

  if (partition_columns.empty()) {
    Status st = write_sliced(data, "", table_schema, {});
    if (!st.ok()) return fail(st);
    return finish();
  }

  std::set<std::string> part_set(partition_columns.begin(), partition_columns.end());
  engine::Schema file_schema;
  std::string data_cols;
  for (const engine::Field& f : table_schema) {
    if (part_set.count(f.name)) continue;
    file_schema.push_back(f);
    if (!data_cols.empty()) data_cols += ", ";
    data_cols += QuoteIdentifier(f.name);
  }
  std::vector<const engine::Field*> part_fields;
  for (const std::string& p : partition_columns) {
    for (const engine::Field& f : table_schema) {
      if (f.name == p) part_fields.push_back(&f);
    }
  }
  if (part_fields.size() != partition_columns.size()) {
    return Status::InvalidArgument("partition columns are not all in the table schema");
  }
  const std::string view = "__sluice_delta_write_" + NewUuidV4().substr(0, 8);
  SLUICE_RETURN_NOT_OK(conn->RegisterBatch(view, data));
  struct Unregister {
    engine::Connection* c;
    std::string v;
    ~Unregister() { (void)c->UnregisterBatch(v); }
  } unregister{conn, view};

  // One sort by the partition keys, then one slice per partition: O(n log n) whatever the
  // number of partitions. Both queries order by the same VARCHAR keys (NULLS LAST).
  std::string keys;
  for (const std::string& p : partition_columns) {
    if (!keys.empty()) keys += ", ";
    keys += "CAST(" + QuoteIdentifier(p) + " AS VARCHAR)";
  }
  std::string order;
  for (size_t c = 0; c < partition_columns.size(); ++c) {
    order += (c > 0 ? ", " : "") + std::to_string(c + 1) + " ASC NULLS LAST";
  }
  auto groups = conn->Query("SELECT " + keys + ", count(*) FROM " + QuoteIdentifier(view) +
                            " GROUP BY ALL ORDER BY " + order);
  if (!groups.ok()) return fail(groups.status());
  std::string sort_keys;
  for (const std::string& p : partition_columns) {
    if (!sort_keys.empty()) sort_keys += ", ";
    sort_keys += "CAST(" + QuoteIdentifier(p) + " AS VARCHAR) ASC NULLS LAST";
  }
  auto sorted = conn->Query("SELECT " + data_cols + " FROM " + QuoteIdentifier(view) +
                            " ORDER BY " + sort_keys);
  if (!sorted.ok()) return fail(sorted.status());
  const size_t count_col = partition_columns.size();
  int64_t offset = 0;
  for (int64_t r = 0; r < groups->num_rows(); ++r) {
    PartitionValues pv;
    for (size_t c = 0; c < partition_columns.size(); ++c) {
      pv[partition_columns[c]] = PartitionText(part_fields[c]->type, groups->GetString(r, c));
    }
    auto n = groups->GetInt64(r, count_col);
    if (!n.ok() || !n->has_value()) return fail(Status::Internal("partition row count missing"));
    engine::Batch rows = sorted->Slice(offset, **n);
    offset += **n;
    Status st = write_sliced(rows, PartitionDirectory(partition_columns, pv), file_schema, pv);
    if (!st.ok()) return fail(st);
  }
  if (offset != sorted->num_rows()) {
    return fail(Status::Internal("partition slices cover " + std::to_string(offset) + " of " +
                                 std::to_string(sorted->num_rows()) + " rows"));
  }
  return finish();
}

DataFileSync& DataFileSync::operator=(DataFileSync&& other) {
  if (this != &other) {
    (void)Wait();
    pending_ = std::move(other.pending_);
    result_ = std::move(other.result_);
  }
  return *this;
}

DataFileSync::~DataFileSync() { (void)Wait(); }

DataFileSync DataFileSync::Start(fs::FileSystem* fs, std::vector<std::string> files) {
  DataFileSync sync;
  if (files.empty()) return sync;
  sync.pending_ = std::async(std::launch::async, [fs, files = std::move(files)]() -> Status {
    std::set<std::string> dirs;
    for (const std::string& f : files) {
      SLUICE_RETURN_NOT_OK_CTX(fs->SyncFile(f), "syncing data file " + f);
      dirs.insert(fs::DirName(f));
    }
    for (const std::string& d : dirs) {
      SLUICE_RETURN_NOT_OK_CTX(fs->SyncDirectory(d), "syncing data directory " + d);
    }
    return Status::OK();
  });
  return sync;
}

Status DataFileSync::Wait() {
  if (!result_.has_value()) {
    result_ = pending_.valid() ? pending_.get() : Status::OK();
  }
  return *result_;
}

}  // namespace sluice::delta
