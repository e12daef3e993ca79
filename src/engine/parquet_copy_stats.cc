// Statistics of a Parquet file from DuckDB's COPY ... RETURN_STATS (parquet_copy_stats.h).
#include "engine/parquet_copy_stats.h"

#include <charconv>
#include <string>
#include <system_error>

#include "common/strings.h"
#include "engine/duckdb_convert.h"

namespace sluice::engine::internal {
namespace {

// The longest VARCHAR min/max that DuckDB's Parquet writer reports untruncated: longer values
// come back cut to this many bytes (a max also incremented), so only shorter ones are exact.
constexpr size_t kParquetStringStatBytes = 256;

// Whether COPY's statistics of a column of this type render exactly as CAST(min/max(..) AS
// VARCHAR) does. Not TIMESTAMPTZ (the cast depends on the session's TimeZone), BOOLEAN (COPY
// reports no min/max), nested and the other types (not checked).
bool CopyStatsComparable(TypeId id) {
  switch (id) {
    case TypeId::kTinyInt:
    case TypeId::kSmallInt:
    case TypeId::kInteger:
    case TypeId::kBigInt:
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kDecimal:
    case TypeId::kVarchar:
    case TypeId::kDate:
    case TypeId::kTimestamp:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::optional<ColumnStats> ColumnStatsFromCopy(const Field& field,
                                               const duckdb::Value& column_statistics,
                                               int64_t num_rows) {
  const TypeId id = field.type.id;
  if (!CopyStatsComparable(id) || column_statistics.IsNull() ||
      column_statistics.type().id() != duckdb::LogicalTypeId::MAP) {
    return std::nullopt;
  }
  const std::string key = QuoteIdentifier(field.name);
  const duckdb::Value* column = nullptr;
  for (const duckdb::Value& entry : duckdb::MapValue::GetChildren(column_statistics)) {
    const auto& kv = duckdb::StructValue::GetChildren(entry);
    if (kv.size() == 2 && !kv[0].IsNull() && kv[0].ToString() == key) column = &kv[1];
  }
  if (column == nullptr || column->IsNull() || column->type().id() != duckdb::LogicalTypeId::MAP) {
    return std::nullopt;
  }
  ColumnStats cs;
  cs.column = field.name;
  bool has_null_count = false;
  std::optional<std::string> has_nan;
  for (const duckdb::Value& entry : duckdb::MapValue::GetChildren(*column)) {
    const auto& kv = duckdb::StructValue::GetChildren(entry);
    if (kv.size() != 2 || kv[0].IsNull() || kv[1].IsNull()) continue;
    const std::string name = kv[0].ToString();
    if (name == "min") {
      cs.min = kv[1].ToString();
    } else if (name == "max") {
      cs.max = kv[1].ToString();
    } else if (name == "has_nan") {
      has_nan = kv[1].ToString();
    } else if (name == "null_count") {
      const std::string text = kv[1].ToString();
      const auto [end, error] =
          std::from_chars(text.data(), text.data() + text.size(), cs.null_count);
      if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
      has_null_count = true;
    }
  }
  if (!has_null_count || cs.null_count < 0 || cs.null_count > num_rows) return std::nullopt;
  const bool all_null = cs.null_count == num_rows;
  if (all_null ? (cs.min || cs.max) : (!cs.min || !cs.max)) return std::nullopt;
  if (all_null) return cs;
  if (id == TypeId::kVarchar &&
      (cs.min->size() >= kParquetStringStatBytes || cs.max->size() >= kParquetStringStatBytes)) {
    return std::nullopt;
  }
  if (id == TypeId::kFloat || id == TypeId::kDouble) {
    auto is_zero = [](const std::string& v) { return v == "0.0" || v == "-0.0"; };
    if (has_nan != "false" || is_zero(*cs.min) || is_zero(*cs.max)) return std::nullopt;
  }
  return cs;
}

}  // namespace sluice::engine::internal
