#include "delta/data_skipping.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "common/strings.h"
#include "delta/schema.h"
#include "delta/values.h"

namespace sluice::delta {

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

std::optional<Comparable> StatValue(const std::string* text, const engine::DataType& type) {
  if (text == nullptr) return std::nullopt;
  auto c = ParseComparable(*text, type);
  if (!c.ok() || std::holds_alternative<std::monostate>(*c)) return std::nullopt;
  return *c;
}

// Evaluation of one predicate on a single (partition) value; nullopt value = NULL. `c` is the
// value compared with the literal (nullopt: cannot decide, keep).
bool EvalOnValue(CompareOp op, const std::optional<Comparable>& value, std::optional<int> c) {
  if (op == CompareOp::kIsNull) return !value.has_value();
  if (op == CompareOp::kIsNotNull) return value.has_value();
  if (!value) return false;  // comparisons with NULL are never true
  if (!c) return true;       // cannot decide: keep
  switch (op) {
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

// Whether `text` is an optional sign and at most 18 decimal digits (surrounding spaces aside):
// a long double holds it exactly.
std::string_view TrimView(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

bool IsIntegerText(std::string_view text) {
  text = TrimView(text);
  size_t i = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? 1 : 0;
  if (i == text.size() || text.size() - i > 18) return false;
  for (; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

bool IsExactIntegerType(engine::TypeId id) {
  return id == engine::TypeId::kTinyInt || id == engine::TypeId::kSmallInt ||
         id == engine::TypeId::kInteger || id == engine::TypeId::kBigInt;
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
  return FilePruner(filter, schema, partition_columns)
      .MayMatch(file, ParsedFileStats::Parse(file.stats));
}

FilePruner::FilePruner(const ScanFilter& filter, const engine::Schema& schema,
                       const std::vector<std::string>& partition_columns) {
  conjuncts_.reserve(filter.conjuncts.size());
  for (const ColumnPredicate& p : filter.conjuncts) {
    Conjunct c;
    c.op = p.op;
    c.field = FindField(schema, p.column);
    if (c.field == nullptr) {
      c.error =
          Status::InvalidArgument("filter column '" + p.column + "' is not in the table schema");
      conjuncts_.push_back(std::move(c));
      continue;
    }
    bool needs_literal = p.op != CompareOp::kIsNull && p.op != CompareOp::kIsNotNull;
    if (needs_literal) {
      if (!p.literal) {
        c.error = Status::InvalidArgument("filter on '" + p.column + "' has no literal");
        conjuncts_.push_back(std::move(c));
        continue;
      }
      auto lit = ParseComparable(*p.literal, c.field->type);
      if (!lit.ok()) {
        c.error = lit.status().WithContext("filter on '" + p.column + "'");
        conjuncts_.push_back(std::move(c));
        continue;
      }
      c.literal = std::move(*lit);
      c.no_literal_order = std::holds_alternative<std::monostate>(c.literal);
      if (std::holds_alternative<long double>(c.literal)) {
        c.literal_text = std::string(TrimView(*p.literal));
        const engine::TypeId id = c.field->type.id;
        if (id == engine::TypeId::kFloat) {
          c.rel_tol = std::ldexp(1.0L, -20);  // a few float ulps (2^-23)
          c.abs_tol = 1e-37L;                 // a literal below FLT_MIN rounds to 0
        } else if (id == engine::TypeId::kDouble) {
          c.rel_tol = std::ldexp(1.0L, -49);  // a few double ulps (2^-52)
          c.abs_tol = 1e-307L;
        } else if (!IsExactIntegerType(id) || !IsIntegerText(*p.literal)) {
          c.rel_tol = std::ldexp(1.0L, -60);  // a few long double ulps (2^-63)
        }
      }
    }
    c.is_partition = std::any_of(
        partition_columns.begin(), partition_columns.end(),
        [&](const std::string& col) { return AsciiEqualsIgnoreCase(col, c.field->name); });
    conjuncts_.push_back(std::move(c));
  }
}

std::optional<int> FilePruner::Compare(const Conjunct& c, const Comparable& value,
                                       std::string_view text) {
  std::optional<int> cmp = CompareValues(c.literal, value);
  if (!cmp || !std::holds_alternative<long double>(c.literal)) return cmp;
  if (TrimView(text) == c.literal_text) return cmp;  // the same number
  long double rel = c.rel_tol;
  // A bound that is not a short integer went through the JSON reader's double (decimals of 38
  // digits too): it is known to a few double ulps only.
  if (!IsIntegerText(text)) rel = std::max(rel, std::ldexp(1.0L, -49));
  if (rel == 0) return cmp;  // an integer literal against an integer bound: exact
  const long double a = std::get<long double>(c.literal), b = std::get<long double>(value);
  const long double diff = std::fabs(a - b);
  if (diff <= rel * std::max(std::fabs(a), std::fabs(b)) || diff <= c.abs_tol) return std::nullopt;
  return cmp;
}

Result<bool> FilePruner::MayMatch(const AddFile& file, const ParsedFileStats& stats) const {
  for (const Conjunct& c : conjuncts_) {
    if (!c.error.ok()) return c.error;
    if (c.no_literal_order) continue;
    const engine::Field* f = c.field;
    const Comparable& lit = c.literal;
    if (c.is_partition) {
      std::optional<Comparable> value;
      std::optional<int> cmp;  // the literal compared with the value
      for (const auto& [k, v] : file.partition_values) {
        if (AsciiEqualsIgnoreCase(k, f->name) && v.has_value() && !v->empty()) {
          auto parsed = ParseComparable(*v, f->type);
          if (!parsed.ok()) return parsed.status().WithContext("partition value of " + file.path);
          value = *parsed;
          cmp = Compare(c, *value, *v);
        }
      }
      // EvalOnValue wants the value compared with the literal.
      if (!EvalOnValue(c.op, value, cmp ? std::optional<int>(-*cmp) : std::nullopt)) return false;
      continue;
    }
    if (!stats.usable()) continue;
    const bool tight_bounds = stats.tight_bounds();
    std::optional<int64_t> nulls = stats.NullCount(f->name), rows = stats.num_records();
    if (c.op == CompareOp::kIsNull) {
      if (tight_bounds && nulls && *nulls == 0) return false;
      continue;
    }
    bool all_null = tight_bounds && nulls && rows && *nulls == *rows;
    if (c.op == CompareOp::kIsNotNull) {
      if (all_null) return false;
      continue;
    }
    if (all_null) return false;  // comparisons with NULL are never true
    const std::string* min_text = stats.Min(f->name);
    const std::string* max_text = stats.Max(f->name);
    std::optional<Comparable> min = StatValue(min_text, f->type);
    std::optional<Comparable> max = StatValue(max_text, f->type);
    // Timestamps in stats are truncated to milliseconds: widen the max by 1ms.
    if (max && std::holds_alternative<int64_t>(*max) &&
        (f->type.id == engine::TypeId::kTimestampTz || f->type.id == engine::TypeId::kTimestamp)) {
      max = Comparable(std::get<int64_t>(*max) + 999);
    }
    // lit compared with min / max: -1, 0, 1, or kUnknown.
    constexpr int kUnknown = 2;
    int cmin = kUnknown, cmax = kUnknown;
    if (min) {
      if (auto cmp = Compare(c, *min, *min_text)) cmin = *cmp;
    }
    if (max) {
      if (auto cmp = Compare(c, *max, *max_text)) cmax = *cmp;
    }
    const bool has_min = cmin != kUnknown, has_max = cmax != kUnknown;
    switch (c.op) {
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
