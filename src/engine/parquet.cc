// Parquet I/O through DuckDB's built-in parquet extension.
#include <functional>

#include "engine/duckdb_convert.h"
#include "engine/engine.h"

namespace sluice::engine {
namespace {

// One statistics target: a top-level column or a struct leaf.
struct StatLeaf {
  std::string label;  // "a" or "a.b"
  std::string expr;   // SQL that reads it from the batch view
  bool ordered;       // false for lists and maps: null count only
};

void CollectLeaves(const std::string& label, const std::string& expr, const DataType& type,
                   std::vector<StatLeaf>& out) {
  switch (type.id) {
    case TypeId::kStruct:
      for (const Field& child : type.children) {
        CollectLeaves(label + "." + child.name,
                      "struct_extract(" + expr + ", " + internal::QuoteLiteral(child.name) + ")",
                      child.type, out);
      }
      break;
    case TypeId::kList:
    case TypeId::kMap:
      out.push_back({label, expr, false});
      break;
    default:
      out.push_back({label, expr, true});
      break;
  }
}

// Removes the temporary view when the write is over, whatever happened.
class ScopedView {
 public:
  ScopedView(internal::ConnectionState* state, std::string name)
      : state_(state), name_(std::move(name)) {}
  ~ScopedView() {
    try {
      (void)state_->DropBatchView(name_);
    } catch (...) {
    }
  }
  ScopedView(const ScopedView&) = delete;
  ScopedView& operator=(const ScopedView&) = delete;

 private:
  internal::ConnectionState* state_;
  std::string name_;
};

}  // namespace

Result<ParquetFileInfo> Connection::WriteParquet(const Batch& batch, const std::string& path,
                                                 const ParquetWriteOptions& options) {
  if (!batch.data()) {
    return Status::InvalidArgument("WriteParquet " + path + ": batch has no columns");
  }
  if (options.row_group_size < 1) {
    return Status::InvalidArgument("WriteParquet: row_group_size must be >= 1");
  }
  auto result = internal::CatchAll([&]() -> Result<ParquetFileInfo> {
    std::shared_ptr<const internal::BatchData> data = batch.data();  // alive until we return
    const std::string view = "__sluice_parquet_" + std::to_string(state_->next_temp_id++);
    SLUICE_RETURN_NOT_OK(state_->CreateBatchView(view, data));
    ScopedView drop_view(state_.get(), view);
    const std::string source = "temp.main." + internal::QuoteIdent(view);

    SLUICE_ASSIGN_OR_RETURN(
        Batch written,
        state_->RunQuery("COPY " + source + " TO " + internal::QuoteLiteral(path) +
                         " (FORMAT parquet, COMPRESSION " +
                         internal::QuoteLiteral(options.compression) + ", ROW_GROUP_SIZE " +
                         std::to_string(options.row_group_size) + ", RETURN_STATS true)"));
    ParquetFileInfo info;
    info.path = path;
    auto count_col = written.ColumnIndex("count");
    auto size_col = written.ColumnIndex("file_size_bytes");
    if (written.num_rows() != 1 || !count_col || !size_col) {
      return Status::Internal("COPY ... RETURN_STATS returned an unexpected result");
    }
    SLUICE_ASSIGN_OR_RETURN(auto rows, written.GetInt64(0, *count_col));
    SLUICE_ASSIGN_OR_RETURN(auto size, written.GetInt64(0, *size_col));
    info.num_rows = rows.value_or(0);
    info.size_bytes = size.value_or(0);

    // Statistics by one aggregate pass over the batch: exact values rendered by
    // CAST(... AS VARCHAR), and null counts for list/map columns too.
    std::vector<StatLeaf> leaves;
    for (const Field& field : batch.schema()) {
      CollectLeaves(field.name, internal::QuoteIdent(field.name), field.type, leaves);
    }
    std::string sql = "SELECT count(*)";
    for (const StatLeaf& leaf : leaves) {
      if (leaf.ordered) {
        sql += ", CAST(min(" + leaf.expr + ") AS VARCHAR), CAST(max(" + leaf.expr + ") AS VARCHAR)";
      }
      sql += ", count(*) - count(" + leaf.expr + ")";
    }
    sql += " FROM " + source;
    SLUICE_ASSIGN_OR_RETURN(Batch stats, state_->RunQuery(sql));
    size_t col = 1;
    for (const StatLeaf& leaf : leaves) {
      ColumnStats cs;
      cs.column = leaf.label;
      if (leaf.ordered) {
        cs.min = stats.GetString(0, col++);
        cs.max = stats.GetString(0, col++);
      }
      SLUICE_ASSIGN_OR_RETURN(auto nulls, stats.GetInt64(0, col++));
      cs.null_count = nulls.value_or(0);
      info.stats.push_back(std::move(cs));
    }
    return info;
  });
  return std::move(result).WithContext("writing Parquet file " + path);
}

Result<Batch> Connection::ReadParquet(const std::vector<std::string>& paths) {
  if (paths.empty()) return Status::InvalidArgument("ReadParquet: no paths");
  std::string list = "[";
  for (size_t i = 0; i < paths.size(); ++i) {
    if (i > 0) list += ", ";
    list += internal::QuoteLiteral(paths[i]);
  }
  list += "]";
  auto result = internal::CatchAll(
      [&]() { return state_->RunQuery("SELECT * FROM read_parquet(" + list + ")"); });
  return std::move(result).WithContext("reading Parquet " + list);
}

}  // namespace sluice::engine
