#include "delta/data_skipping.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "delta/schema.h"
#include "delta/values.h"

namespace sluice::delta {

using nlohmann::json;

namespace {

const char* OpSql(CompareOp op) {
  switch (op) {
    case CompareOp::kEq:
      return "=";
    case CompareOp::kNe:
      return "<>";
    case CompareOp::kLt:
      return "<";
    case CompareOp::kLe:
      return "<=";
    case CompareOp::kGt:
      return ">";
    case CompareOp::kGe:
      return ">=";
    case CompareOp::kIsNull:
      return "IS NULL";
    case CompareOp::kIsNotNull:
      return "IS NOT NULL";
  }
  return "=";
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

// Finds `name` in a stats object case-insensitively.
const json* StatsField(const json& obj, const std::string& name) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(name);
  if (it != obj.end()) return &*it;
  for (auto i = obj.begin(); i != obj.end(); ++i) {
    if (EqualsIgnoreCase(i.key(), name)) return &i.value();
  }
  return nullptr;
}

std::optional<Comparable> StatValue(const json* v, const engine::DataType& type) {
  if (v == nullptr || v->is_null() || v->is_object() || v->is_array()) return std::nullopt;
  std::string text = v->is_string() ? v->get<std::string>() : v->dump();
  auto c = ParseComparable(text, type);
  if (!c.ok() || std::holds_alternative<std::monostate>(*c)) return std::nullopt;
  return *c;
}

// Exact evaluation of one predicate on a single (partition) value; nullopt value = NULL.
bool EvalOnValue(const ColumnPredicate& p, const std::optional<Comparable>& value,
                 const Comparable& lit) {
  if (p.op == CompareOp::kIsNull) return !value.has_value();
  if (p.op == CompareOp::kIsNotNull) return value.has_value();
  if (!value) return false;  // comparisons with NULL are never true
  auto c = CompareValues(*value, lit);
  if (!c) return true;  // cannot decide: keep
  switch (p.op) {
    case CompareOp::kEq:
      return *c == 0;
    case CompareOp::kNe:
      return *c != 0;
    case CompareOp::kLt:
      return *c < 0;
    case CompareOp::kLe:
      return *c <= 0;
    case CompareOp::kGt:
      return *c > 0;
    case CompareOp::kGe:
      return *c >= 0;
    default:
      return true;
  }
}

}  // namespace

Result<std::string> FilterToSql(const ScanFilter& filter, const engine::Schema& schema) {
  if (filter.conjuncts.empty()) return std::string("TRUE");
  std::string sql;
  for (const ColumnPredicate& p : filter.conjuncts) {
    const engine::Field* f = FindField(schema, p.column);
    if (f == nullptr)
      return Status::InvalidArgument("filter column '" + p.column + "' is not in the table schema");
    if (!sql.empty()) sql += " AND ";
    std::string col = QuoteIdentifier(f->name);
    if (p.op == CompareOp::kIsNull || p.op == CompareOp::kIsNotNull) {
      sql += "(" + col + " " + OpSql(p.op) + ")";
      continue;
    }
    if (!p.literal) return Status::InvalidArgument("filter on '" + p.column + "' has no literal");
    std::string lit;
    if (f->type.id == engine::TypeId::kTimestampTz) {
      SLUICE_ASSIGN_OR_RETURN(int64_t micros, ParseTimestampMicros(*p.literal));
      lit = "CAST(" + QuoteLiteral(FormatTimestampMicros(micros)) + " AS TIMESTAMPTZ)";
    } else {
      lit = "CAST(" + QuoteLiteral(*p.literal) + " AS " + f->type.ToSql() + ")";
    }
    sql += "(" + col + " " + OpSql(p.op) + " " + lit + ")";
  }
  return sql;
}

Result<bool> FileMayMatch(const AddFile& file, const ScanFilter& filter,
                          const engine::Schema& schema,
                          const std::vector<std::string>& partition_columns) {
  json stats;
  bool have_stats = false;
  if (file.stats) {
    stats = json::parse(*file.stats, nullptr, false);
    have_stats = !stats.is_discarded() && stats.is_object();
  }
  for (const ColumnPredicate& p : filter.conjuncts) {
    const engine::Field* f = FindField(schema, p.column);
    if (f == nullptr)
      return Status::InvalidArgument("filter column '" + p.column + "' is not in the table schema");
    bool needs_literal = p.op != CompareOp::kIsNull && p.op != CompareOp::kIsNotNull;
    Comparable lit;
    if (needs_literal) {
      if (!p.literal) return Status::InvalidArgument("filter on '" + p.column + "' has no literal");
      SLUICE_ASSIGN_OR_RETURN_CTX(lit, ParseComparable(*p.literal, f->type),
                                  "filter on '" + p.column + "'");
      if (std::holds_alternative<std::monostate>(lit)) continue;
    }
    bool is_partition =
        std::any_of(partition_columns.begin(), partition_columns.end(),
                    [&](const std::string& c) { return EqualsIgnoreCase(c, f->name); });
    if (is_partition) {
      std::optional<Comparable> value;
      for (const auto& [k, v] : file.partition_values) {
        if (EqualsIgnoreCase(k, f->name) && v.has_value() && !v->empty()) {
          auto c = ParseComparable(*v, f->type);
          if (!c.ok()) return c.status().WithContext("partition value of " + file.path);
          value = *c;
        }
      }
      if (!EvalOnValue(p, value, lit)) return false;
      continue;
    }
    if (!have_stats) continue;
    const json* num_records = StatsField(stats, "numRecords");
    const json* null_count_obj = StatsField(stats, "nullCount");
    const json* null_count = null_count_obj ? StatsField(*null_count_obj, f->name) : nullptr;
    const json* tight = StatsField(stats, "tightBounds");
    bool tight_bounds = tight == nullptr || !tight->is_boolean() || tight->get<bool>();
    std::optional<int64_t> nulls, rows;
    if (null_count && null_count->is_number_integer()) nulls = null_count->get<int64_t>();
    if (num_records && num_records->is_number_integer()) rows = num_records->get<int64_t>();
    if (p.op == CompareOp::kIsNull) {
      if (tight_bounds && nulls && *nulls == 0) return false;
      continue;
    }
    bool all_null = tight_bounds && nulls && rows && *nulls == *rows;
    if (p.op == CompareOp::kIsNotNull) {
      if (all_null) return false;
      continue;
    }
    if (all_null) return false;  // comparisons with NULL are never true
    const json* mins = StatsField(stats, "minValues");
    const json* maxs = StatsField(stats, "maxValues");
    std::optional<Comparable> min =
        mins ? StatValue(StatsField(*mins, f->name), f->type) : std::nullopt;
    std::optional<Comparable> max =
        maxs ? StatValue(StatsField(*maxs, f->name), f->type) : std::nullopt;
    // Timestamps in stats are truncated to milliseconds: widen the max by 1ms.
    if (max && std::holds_alternative<int64_t>(*max) &&
        (f->type.id == engine::TypeId::kTimestampTz || f->type.id == engine::TypeId::kTimestamp)) {
      max = Comparable(std::get<int64_t>(*max) + 999);
    }
    // lit compared with min / max: -1, 0, 1, or kUnknown.
    constexpr int kUnknown = 2;
    int cmin = kUnknown, cmax = kUnknown;
    if (min) {
      if (auto c = CompareValues(lit, *min)) cmin = *c;
    }
    if (max) {
      if (auto c = CompareValues(lit, *max)) cmax = *c;
    }
    const bool has_min = cmin != kUnknown, has_max = cmax != kUnknown;
    switch (p.op) {
      case CompareOp::kEq:
        if ((has_min && cmin < 0) || (has_max && cmax > 0)) return false;
        break;
      case CompareOp::kNe:
        if (has_min && has_max && cmin == 0 && cmax == 0 && tight_bounds &&
            !std::holds_alternative<std::string>(lit)) {
          return false;
        }
        break;
      case CompareOp::kLt:  // some row < lit needs min < lit
        if (has_min && cmin <= 0) return false;
        break;
      case CompareOp::kLe:
        if (has_min && cmin < 0) return false;
        break;
      case CompareOp::kGt:  // some row > lit needs max > lit
        if (has_max && cmax >= 0) return false;
        break;
      case CompareOp::kGe:
        if (has_max && cmax > 0) return false;
        break;
      default:
        break;
    }
  }
  return true;
}

}  // namespace sluice::delta
