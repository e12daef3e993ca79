// Parquet I/O through DuckDB's built-in parquet extension.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/strings.h"
#include "duckdb/parser/query_node/select_node.hpp"
#include "duckdb/parser/statement/copy_statement.hpp"
#include "duckdb/parser/statement/select_statement.hpp"
#include "duckdb/parser/tableref/column_data_ref.hpp"
#include "engine/duckdb_convert.h"
#include "engine/engine.h"
#include "engine/parquet_copy_stats.h"
#include "engine/parquet_field_ids.h"

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
                      "struct_extract(" + expr + ", " + QuoteLiteral(child.name) + ")", child.type,
                      out);
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

// The table name that RunOverBatch replaces by the batch itself.
constexpr const char* kBatchTable = "__sluice_parquet_batch";

// The SELECT node of `statement` (a SELECT, or a COPY (SELECT ...) TO ...); null otherwise.
duckdb::SelectNode* SelectNodeOf(duckdb::SQLStatement& statement) {
  duckdb::QueryNode* node = nullptr;
  if (statement.type == duckdb::StatementType::SELECT_STATEMENT) {
    node = statement.Cast<duckdb::SelectStatement>().node.get();
  } else if (statement.type == duckdb::StatementType::COPY_STATEMENT) {
    node = statement.Cast<duckdb::CopyStatement>().info->select_statement.get();
  }
  if (node == nullptr || node->type != duckdb::QueryNodeType::SELECT_NODE) return nullptr;
  return &node->Cast<duckdb::SelectNode>();
}

// Runs `sql`, one statement whose FROM clause is kBatchTable, with that table replaced by a scan
// of `data` in place: no temporary view, so no catalog writes (two statements fewer per file).
Result<Batch> RunOverBatch(internal::ConnectionState* state, const std::string& sql,
                           const std::shared_ptr<const internal::BatchData>& data) {
  auto statements = state->conn->ExtractStatements(sql);
  duckdb::SelectNode* select = statements.size() == 1 ? SelectNodeOf(*statements[0]) : nullptr;
  if (select == nullptr || !select->from_table) {
    return Status::Internal("WriteParquet: unexpected statement shape: " + sql);
  }
  duckdb::vector<std::string> names(data->names.begin(), data->names.end());
  auto ref = duckdb::make_uniq<duckdb::ColumnDataRef>(
      duckdb::optionally_owned_ptr<duckdb::ColumnDataCollection>(data->collection),
      std::move(names));
  ref->alias = kBatchTable;  // the binder needs an alias to expand "*"
  select->from_table = std::move(ref);
  auto result = state->conn->Query(std::move(statements[0]));
  if (result->HasError()) return internal::StatusFromError(result->GetErrorObject());
  std::vector<std::string> out_names(result->names.begin(), result->names.end());
  auto collection = result->TakeCollection();
  return internal::MakeBatch(state->db,
                             std::unique_ptr<duckdb::ColumnDataCollection>(collection.release()),
                             std::move(out_names));
}

}  // namespace

Result<ParquetFileInfo> Connection::WriteParquet(const Batch& batch, const std::string& path,
                                                 const ParquetWriteOptions& options) {
  return WriteParquetWithFieldIds(this, batch, path, options, {});
}

Result<ParquetFileInfo> WriteParquetWithFieldIds(Connection* conn, const Batch& batch,
                                                 const std::string& path,
                                                 const ParquetWriteOptions& options,
                                                 const std::vector<ParquetFieldId>& ids) {
  if (!batch.data()) {
    return Status::InvalidArgument("WriteParquet " + path + ": batch has no columns");
  }
  if (options.row_group_size < 1) {
    return Status::InvalidArgument("WriteParquet: row_group_size must be >= 1");
  }
  auto result = internal::CatchAll([&]() -> Result<ParquetFileInfo> {
    const std::shared_ptr<const internal::BatchData>& data = batch.data();  // the caller's rows
    const std::string source = kBatchTable;

    SLUICE_ASSIGN_OR_RETURN(std::string field_ids, FieldIdsOptionSql(ids));
    SLUICE_ASSIGN_OR_RETURN(
        Batch written,
        RunOverBatch(conn->state(),
                     "COPY (SELECT * FROM " + source + ") TO " + QuoteLiteral(path) +
                         " (FORMAT parquet, COMPRESSION " + QuoteLiteral(options.compression) +
                         ", ROW_GROUP_SIZE " + std::to_string(options.row_group_size) +
                         (field_ids.empty() ? "" : ", FIELD_IDS " + field_ids) +
                         ", RETURN_STATS true)",
                     data));
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

    // Statistics from COPY's own where they are exact (ColumnStatsFromCopy); the other columns
    // by one aggregate pass over the batch: exact values rendered by CAST(... AS VARCHAR), and
    // null counts for list/map columns too. No second statement when COPY covers every column.
    duckdb::Value copy_stats;
    if (auto stats_col = written.ColumnIndex("column_statistics")) {
      copy_stats = written.data()->collection->GetRows().GetValue(*stats_col, 0);
    }
    std::vector<std::optional<ColumnStats>> from_copy;
    std::vector<StatLeaf> leaves;
    std::vector<size_t> leaves_of_field;
    for (const Field& field : batch.schema()) {
      from_copy.push_back(internal::ColumnStatsFromCopy(field, copy_stats, info.num_rows));
      const size_t before = leaves.size();
      if (!from_copy.back()) {
        CollectLeaves(field.name, QuoteIdentifier(field.name), field.type, leaves);
      }
      leaves_of_field.push_back(leaves.size() - before);
    }
    std::vector<ColumnStats> computed;
    if (!leaves.empty()) {
      std::string sql = "SELECT count(*)";
      for (const StatLeaf& leaf : leaves) {
        if (leaf.ordered) {
          sql +=
              ", CAST(min(" + leaf.expr + ") AS VARCHAR), CAST(max(" + leaf.expr + ") AS VARCHAR)";
        }
        sql += ", count(*) - count(" + leaf.expr + ")";
      }
      sql += " FROM " + source;
      SLUICE_ASSIGN_OR_RETURN(Batch stats, RunOverBatch(conn->state(), sql, data));
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
        computed.push_back(std::move(cs));
      }
    }
    // In schema order, a field's leaves in place of the field.
    size_t next = 0;
    for (size_t i = 0; i < from_copy.size(); ++i) {
      if (from_copy[i]) {
        info.stats.push_back(std::move(*from_copy[i]));
        continue;
      }
      for (size_t k = 0; k < leaves_of_field[i]; ++k)
        info.stats.push_back(std::move(computed[next++]));
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
    list += QuoteLiteral(paths[i]);
  }
  list += "]";
  auto result = internal::CatchAll(
      [&]() { return state_->RunQuery("SELECT * FROM read_parquet(" + list + ")"); });
  return std::move(result).WithContext("reading Parquet " + list);
}

}  // namespace sluice::engine
