#include "engine/spark_collections.h"

#include <string>
#include <vector>

#include "duckdb/common/vector_operations/unary_executor.hpp"
#include "duckdb/common/vector_operations/vector_operations.hpp"
#include "duckdb/function/function_binder.hpp"
#include "duckdb/planner/expression.hpp"
#include "engine/spark_macros.h"

namespace sluice::engine::internal {
namespace {

// How an array's index is read: xs[i] (0-based), element_at (1-based, negative from the end)
// and try_element_at (element_at with NULL out of bounds).
enum class Index { kZeroBased, kElementAt, kTryElementAt };

template <Index kMode>
void ArrayGet(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  const duckdb::idx_t n = args.size();
  duckdb::Vector& list = args.data[0];
  duckdb::UnifiedVectorFormat lists, indexes;
  list.ToUnifiedFormat(n, lists);
  args.data[1].ToUnifiedFormat(n, indexes);
  const auto* entries = duckdb::UnifiedVectorFormat::GetData<duckdb::list_entry_t>(lists);
  const auto* index = duckdb::UnifiedVectorFormat::GetData<int64_t>(indexes);
  duckdb::SelectionVector sel(n);
  std::vector<duckdb::idx_t> nulls;
  bool any = false;
  for (duckdb::idx_t row = 0; row < n; ++row) {
    const duckdb::idx_t l = lists.sel->get_index(row), x = indexes.sel->get_index(row);
    sel.set_index(row, 0);
    if (!lists.validity.RowIsValid(l) || !indexes.validity.RowIsValid(x)) {
      nulls.push_back(row);
      continue;
    }
    const duckdb::list_entry_t e = entries[l];
    const int64_t i = index[x];
    const auto size = static_cast<int64_t>(e.length);
    int64_t at = i;  // 0-based
    if (kMode != Index::kZeroBased) {
      if (i == 0) {
        throw duckdb::InvalidInputException(
            "[INVALID_INDEX_OF_ZERO] element_at: the index 0 is invalid; an index shall be either "
            "< 0 or > 0 (the first element has index 1)");
      }
      at = i > 0 ? i - 1 : size + i;
    }
    if (at < 0 || at >= size) {
      if (kMode == Index::kTryElementAt) {
        nulls.push_back(row);
        continue;
      }
      throw duckdb::InvalidInputException(
          kMode == Index::kZeroBased
              ? "[INVALID_ARRAY_INDEX] The index %lld is out of bounds. The array has %lld "
                "elements (array[i] counts from 0; try_element_at(array, i + 1) gives NULL "
                "instead)"
              : "[INVALID_ARRAY_INDEX_IN_ELEMENT_AT] The index %lld is out of bounds. The array "
                "has %lld elements (try_element_at gives NULL instead)",
          static_cast<long long>(i), static_cast<long long>(size));
    }
    sel.set_index(row, e.offset + static_cast<duckdb::idx_t>(at));
    any = true;
  }
  if (!any) {
    result.SetVectorType(duckdb::VectorType::CONSTANT_VECTOR);
    duckdb::ConstantVector::SetNull(result, true);
    return;
  }
  result.Slice(duckdb::ListVector::GetEntry(list), sel, n);
  result.Flatten(n);
  for (duckdb::idx_t row : nulls) duckdb::FlatVector::SetNull(result, row, true);
}

duckdb::unique_ptr<duckdb::FunctionData> BindArrayGet(
    duckdb::ClientContext&, duckdb::ScalarFunction& bound,
    duckdb::vector<duckdb::unique_ptr<duckdb::Expression>>& arguments) {
  const duckdb::LogicalType& type = arguments[0]->return_type;
  if (type.id() != duckdb::LogicalTypeId::LIST) {
    throw duckdb::BinderException("%s: expects an ARRAY, got %s", bound.name, type.ToString());
  }
  bound.arguments[0] = type;
  bound.return_type = duckdb::ListType::GetChildType(type);
  return nullptr;
}

// reverse of an array: the elements in the opposite order (DuckDB's list_reverse is a macro, which
// a function cannot be bound as).
void ListReverse(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  const duckdb::idx_t n = args.size();
  duckdb::Vector& list = args.data[0];
  duckdb::UnifiedVectorFormat lists;
  list.ToUnifiedFormat(n, lists);
  const auto* entries = duckdb::UnifiedVectorFormat::GetData<duckdb::list_entry_t>(lists);
  duckdb::idx_t total = 0;
  for (duckdb::idx_t row = 0; row < n; ++row) {
    const duckdb::idx_t l = lists.sel->get_index(row);
    if (lists.validity.RowIsValid(l)) total += entries[l].length;
  }
  duckdb::SelectionVector sel(total == 0 ? 1 : total);
  auto* out = duckdb::FlatVector::GetData<duckdb::list_entry_t>(result);
  auto& validity = duckdb::FlatVector::Validity(result);
  duckdb::idx_t at = 0;
  for (duckdb::idx_t row = 0; row < n; ++row) {
    const duckdb::idx_t l = lists.sel->get_index(row);
    if (!lists.validity.RowIsValid(l)) {
      validity.SetInvalid(row);
      continue;
    }
    const duckdb::list_entry_t e = entries[l];
    out[row] = duckdb::list_entry_t(at, e.length);
    for (duckdb::idx_t k = 0; k < e.length; ++k) sel.set_index(at++, e.offset + e.length - 1 - k);
  }
  duckdb::ListVector::Reserve(result, total);
  if (total > 0) {
    duckdb::VectorOperations::Copy(duckdb::ListVector::GetEntry(list),
                                   duckdb::ListVector::GetEntry(result), sel, total, 0, 0);
  }
  duckdb::ListVector::SetListSize(result, total);
  if (args.AllConstant()) result.SetVectorType(duckdb::VectorType::CONSTANT_VECTOR);
}

duckdb::unique_ptr<duckdb::FunctionData> BindListReverse(
    duckdb::ClientContext&, duckdb::ScalarFunction& bound,
    duckdb::vector<duckdb::unique_ptr<duckdb::Expression>>& arguments) {
  bound.arguments[0] = arguments[0]->return_type;
  bound.return_type = arguments[0]->return_type;
  return nullptr;
}

// A Spark function of one name over several types, bound as the engine's function for the type
// of its first argument (an array, a map, another type).
struct Dispatch {
  const char* name;
  const char* list;   // nullptr: an array is refused
  const char* map;    // nullptr: a map is refused
  const char* other;  // nullptr: other types are refused
};
constexpr Dispatch kDispatch[] = {
    {"spark_reverse", "spark_list_reverse", nullptr, "reverse"},
    {"spark_element", "spark_array_get", "map_extract_value", nullptr},
    {"spark_element_at", "spark_array_element_at", "map_extract_value", nullptr},
    {"spark_try_element_at", "spark_array_try_element_at", "map_extract_value", nullptr},
};

struct DispatchData : duckdb::FunctionData {
  explicit DispatchData(std::string t) : target(std::move(t)) {}
  duckdb::unique_ptr<duckdb::FunctionData> Copy() const override {
    return duckdb::make_uniq<DispatchData>(target);
  }
  bool Equals(const duckdb::FunctionData& other) const override {
    return other.Cast<DispatchData>().target == target;
  }
  std::string target;
};

void Unreachable(duckdb::DataChunk&, duckdb::ExpressionState&, duckdb::Vector&) {
  throw duckdb::InternalException("a dispatching Spark function ran unbound");
}

duckdb::unique_ptr<duckdb::FunctionData> BindDispatch(
    duckdb::ClientContext&, duckdb::ScalarFunction& bound,
    duckdb::vector<duckdb::unique_ptr<duckdb::Expression>>& arguments) {
  for (const Dispatch& d : kDispatch) {
    if (bound.name != d.name) continue;
    const duckdb::LogicalType& type = arguments[0]->return_type;
    const char* target = type.id() == duckdb::LogicalTypeId::LIST  ? d.list
                         : type.id() == duckdb::LogicalTypeId::MAP ? d.map
                                                                   : d.other;
    if (target == nullptr) {
      throw duckdb::BinderException("%s: does not take a %s", bound.name.substr(6),
                                    type.ToString());
    }
    for (duckdb::idx_t k = 0; k < arguments.size(); ++k) {
      bound.arguments[k] = arguments[k]->return_type;
    }
    bound.return_type = type;  // replaced with the target's (BindDispatchExpression)
    return duckdb::make_uniq<DispatchData>(target);
  }
  throw duckdb::InternalException("no dispatch for %s", bound.name);
}

duckdb::unique_ptr<duckdb::Expression> BindDispatchExpression(
    duckdb::FunctionBindExpressionInput& input) {
  const std::string& target = input.bind_data->Cast<DispatchData>().target;
  duckdb::vector<duckdb::unique_ptr<duckdb::Expression>> children;
  for (auto& c : input.children) children.push_back(c->Copy());
  duckdb::FunctionBinder binder(input.context);
  duckdb::ErrorData error;
  auto expr = binder.BindScalarFunction(DEFAULT_SCHEMA, target, std::move(children), error);
  if (!expr) error.Throw();
  return expr;
}

void Size(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::UnaryExecutor::Execute<duckdb::list_entry_t, int32_t>(
      args.data[0], result, args.size(),
      [](duckdb::list_entry_t e) { return static_cast<int32_t>(e.length); });
}

duckdb::unique_ptr<duckdb::FunctionData> BindSize(
    duckdb::ClientContext&, duckdb::ScalarFunction& bound,
    duckdb::vector<duckdb::unique_ptr<duckdb::Expression>>& arguments) {
  const duckdb::LogicalType& type = arguments[0]->return_type;
  if (type.id() != duckdb::LogicalTypeId::LIST && type.id() != duckdb::LogicalTypeId::MAP) {
    throw duckdb::BinderException("size: expects an ARRAY or a MAP, got %s", type.ToString());
  }
  bound.arguments[0] = type;
  return nullptr;
}

const duckdb::DefaultMacro kMacros[] = {
    {DEFAULT_SCHEMA,
     "spark_exists",
     {"bs", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN bs IS NULL THEN NULL WHEN list_bool_or(bs) THEN true WHEN list_count(bs) < len(bs) "
     "THEN NULL ELSE false END"},
    {DEFAULT_SCHEMA,
     "spark_forall",
     {"bs", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN bs IS NULL THEN NULL WHEN list_bool_or(list_transform(bs, lambda b_: NOT b_)) THEN "
     "false WHEN list_count(bs) < len(bs) THEN NULL ELSE true END"},
    {DEFAULT_SCHEMA,
     "spark_map_zip",
     {"a", "b", nullptr},
     {{nullptr, nullptr}},
     "list_transform(list_concat(map_keys(a), list_filter(map_keys(b), lambda k_: NOT "
     "list_contains(map_keys(a), k_))), lambda k_: struct_pack(key := k_, v1 := "
     "map_extract_value(a, k_), v2 := map_extract_value(b, k_)))"},
    {DEFAULT_SCHEMA,
     "spark_array_pairs",
     {"a", nullptr},
     {{nullptr, nullptr}},
     "flatten(list_transform(a, lambda r_: list_transform(a, lambda l_: struct_pack(l := l_, r := "
     "r_))))"},
    {DEFAULT_SCHEMA,
     "spark_sort_by_comparison",
     {"a", "c", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN a IS NULL THEN NULL ELSE list_transform(range(0, len(a)), lambda k_: "
     "a[list_position(list_transform(range(1, len(a) + 1), lambda i_: len(list_filter(range(1, "
     "len(a) + 1), lambda j_: c[(i_ - 1) * len(a) + j_] < 0 OR (c[(i_ - 1) * len(a) + j_] = 0 AND "
     "j_ < i_)))), k_)]) END"},
    {DEFAULT_SCHEMA,
     "spark_array_contains",
     {"a", "x", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN a IS NULL OR x IS NULL THEN NULL WHEN list_contains(a, x) THEN true WHEN "
     "list_count(a) < len(a) THEN NULL ELSE false END"},
    {DEFAULT_SCHEMA,
     "spark_array_distinct",
     {"a", nullptr},
     {{nullptr, nullptr}},
     "list_filter(a, lambda e_, i_: list_position(a, e_) = i_)"},
    {DEFAULT_SCHEMA,
     "array_union",
     {"a", "b", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN a IS NULL OR b IS NULL THEN NULL ELSE spark_array_distinct(list_concat(a, b)) END"},
    {DEFAULT_SCHEMA,
     "spark_array_intersect",
     {"a", "b", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN a IS NULL OR b IS NULL THEN NULL ELSE list_filter(spark_array_distinct(a), lambda "
     "e_: list_position(b, e_) IS NOT NULL) END"},
    {DEFAULT_SCHEMA,
     "array_except",
     {"a", "b", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN a IS NULL OR b IS NULL THEN NULL ELSE list_filter(spark_array_distinct(a), lambda "
     "e_: list_position(b, e_) IS NULL) END"},
    {DEFAULT_SCHEMA,
     "arrays_overlap",
     {"a", "b", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN a IS NULL OR b IS NULL THEN NULL WHEN list_has_any(a, b) THEN true WHEN len(a) > 0 "
     "AND len(b) > 0 AND (list_count(a) < len(a) OR list_count(b) < len(b)) THEN NULL ELSE false "
     "END"},
    {DEFAULT_SCHEMA,
     "array_join",
     {"a", "d", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN a IS NULL OR d IS NULL THEN NULL ELSE coalesce(array_to_string(list_filter(a, "
     "lambda e_: e_ IS NOT NULL), d), '') END"},
    {DEFAULT_SCHEMA,
     "array_join",
     {"a", "d", "r", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN a IS NULL OR d IS NULL OR r IS NULL THEN NULL ELSE "
     "coalesce(array_to_string(list_transform(a, lambda e_: coalesce(CAST(e_ AS VARCHAR), r)), d), "
     "'') END"},
    {DEFAULT_SCHEMA, "array_max", {"a", nullptr}, {{nullptr, nullptr}}, "list_max(a)"},
    {DEFAULT_SCHEMA, "array_min", {"a", nullptr}, {{nullptr, nullptr}}, "list_min(a)"},
    {DEFAULT_SCHEMA,
     "array_remove",
     {"a", "x", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN a IS NULL OR x IS NULL THEN NULL ELSE list_filter(a, lambda e_: e_ IS NULL OR e_ "
     "<> x) END"},
    {DEFAULT_SCHEMA,
     "spark_array_prepend",
     {"a", "x", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN a IS NULL THEN NULL ELSE list_prepend(x, a) END"},
    {DEFAULT_SCHEMA,
     "array_compact",
     {"a", nullptr},
     {{nullptr, nullptr}},
     "list_filter(a, lambda e_: e_ IS NOT NULL)"},
    {DEFAULT_SCHEMA,
     "array_insert",
     {"a", "p", "x", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN a IS NULL OR p IS NULL THEN NULL WHEN p = 0 THEN error('[INVALID_INDEX_OF_ZERO] "
     "array_insert: the index 0 is invalid; an index shall be either < 0 or > 0 (the first element "
     "has index 1)') WHEN p > 0 AND p <= len(a) + 1 THEN list_concat(a[1:p - 1], [x], a[p:]) WHEN "
     "p > 0 THEN list_concat(a, list_transform(range(len(a) + 1, p), lambda i_: NULL), [x]) WHEN "
     "len(a) + p + 1 >= 0 THEN list_concat(a[1:len(a) + p + 1], [x], a[len(a) + p + 2:]) ELSE "
     "list_concat([x], list_transform(range(0, -(len(a) + p + 1)), lambda i_: NULL), a) END"},
    {DEFAULT_SCHEMA,
     "slice",
     {"a", "s", "l", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN a IS NULL OR s IS NULL OR l IS NULL THEN NULL WHEN s = 0 THEN "
     "error('[INVALID_PARAMETER_VALUE.START] slice: the start index must not be 0 (the first "
     "element has index 1)') WHEN l < 0 THEN error('[INVALID_PARAMETER_VALUE.LENGTH] slice: the "
     "length must be >= 0, got ' || l) WHEN s > 0 THEN list_slice(a, s, s + l - 1) WHEN len(a) + s "
     "< 0 THEN list_slice(a, 1, 0) ELSE list_slice(a, len(a) + s + 1, len(a) + s + l) END"},
    {DEFAULT_SCHEMA,
     "shuffle",
     {"a", nullptr},
     {{nullptr, nullptr}},
     "list_transform(list_sort(list_transform(a, lambda e_: struct_pack(r := random(), v := e_))), "
     "lambda s_: s_.v)"},
    {DEFAULT_SCHEMA,
     "map_from_arrays",
     {"k", "v", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN k IS NULL OR v IS NULL THEN NULL WHEN len(k) <> len(v) THEN "
     "error('map_from_arrays: the key and the value arrays have different lengths') ELSE map(k, v) "
     "END"},
    {DEFAULT_SCHEMA,
     "collect_list",
     {"x", nullptr},
     {{nullptr, nullptr}},
     "coalesce(list(x) FILTER (WHERE x IS NOT NULL), [])"},
    {DEFAULT_SCHEMA,
     "collect_set",
     {"x", nullptr},
     {{nullptr, nullptr}},
     "coalesce(list(DISTINCT x) FILTER (WHERE x IS NOT NULL), [])"},
    {DEFAULT_SCHEMA, "every", {"b", nullptr}, {{nullptr, nullptr}}, "bool_and(b)"},
    {DEFAULT_SCHEMA,
     "percentile",
     {"x", "p", nullptr},
     {{nullptr, nullptr}},
     "quantile_cont(x, p)"},
    {DEFAULT_SCHEMA, "spark_first", {"x", nullptr}, {{nullptr, nullptr}}, "first(x)"},
    {DEFAULT_SCHEMA,
     "spark_first",
     {"x", "ignore_nulls", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN ignore_nulls THEN first(x) FILTER (WHERE x IS NOT NULL) ELSE first(x) END"},
    {DEFAULT_SCHEMA, "spark_last", {"x", nullptr}, {{nullptr, nullptr}}, "last(x)"},
    {DEFAULT_SCHEMA,
     "spark_last",
     {"x", "ignore_nulls", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN ignore_nulls THEN last(x) FILTER (WHERE x IS NOT NULL) ELSE last(x) END"},
    {DEFAULT_SCHEMA, "explode", {"a", nullptr}, {{nullptr, nullptr}}, "unnest(a)"},
    {DEFAULT_SCHEMA,
     "explode_outer",
     {"a", nullptr},
     {{nullptr, nullptr}},
     "unnest(CASE WHEN a IS NULL OR len(a) = 0 THEN [NULL] ELSE a END)"},
    {DEFAULT_SCHEMA,
     "sequence",
     {"a", "b", nullptr},
     {{nullptr, nullptr}},
     "generate_series(CAST(a AS BIGINT), CAST(b AS BIGINT), CASE WHEN a <= b THEN 1 ELSE -1 END)"},
    {DEFAULT_SCHEMA,
     "sequence",
     {"a", "b", "s", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN s = 0 OR (a < b AND s < 0) OR (a > b AND s > 0) THEN error('sequence: the step ' "
     "|| s || ' does not lead from ' || a || ' to ' || b) ELSE generate_series(CAST(a AS BIGINT), "
     "CAST(b AS BIGINT), CAST(s AS BIGINT)) END"},
    {DEFAULT_SCHEMA,
     "array_repeat",
     {"x", "n", nullptr},
     {{nullptr, nullptr}},
     "list_transform(generate_series(1, greatest(CAST(n AS BIGINT), 0)), lambda i: x)"},
    {DEFAULT_SCHEMA,
     "map_contains_key",
     {"m", "k", nullptr},
     {{nullptr, nullptr}},
     "map_contains(m, k)"},
    {DEFAULT_SCHEMA,
     "spark_str_to_map_entry",
     {"e", "kd", nullptr},
     {{nullptr, nullptr}},
     "struct_pack(k := CASE WHEN contains(e, kd) THEN e[1:instr(e, kd) - 1] ELSE e END, v := "
     "CASE WHEN contains(e, kd) THEN e[instr(e, kd) + length(kd):] END)"},
    {DEFAULT_SCHEMA, "str_to_map", {"s", nullptr}, {{nullptr, nullptr}}, "str_to_map(s, ',', ':')"},
    {DEFAULT_SCHEMA,
     "str_to_map",
     {"s", "pd", nullptr},
     {{nullptr, nullptr}},
     "str_to_map(s, pd, ':')"},
    {DEFAULT_SCHEMA,
     "str_to_map",
     {"s", "pd", "kd", nullptr},
     {{nullptr, nullptr}},
     "map_from_entries(list_transform(string_split(s, pd), lambda e: spark_str_to_map_entry(e, "
     "kd)))"},
};

}  // namespace

void RegisterSparkCollections(duckdb::ExtensionLoader& loader) {
  duckdb::ScalarFunction size("size", {duckdb::LogicalType::ANY}, duckdb::LogicalType::INTEGER,
                              Size, BindSize);
  loader.RegisterFunction(size);
  loader.RegisterFunction(duckdb::ScalarFunction(
      "spark_array_get", {duckdb::LogicalType::ANY, duckdb::LogicalType::BIGINT},
      duckdb::LogicalType::ANY, ArrayGet<Index::kZeroBased>, BindArrayGet));
  loader.RegisterFunction(duckdb::ScalarFunction(
      "spark_array_element_at", {duckdb::LogicalType::ANY, duckdb::LogicalType::BIGINT},
      duckdb::LogicalType::ANY, ArrayGet<Index::kElementAt>, BindArrayGet));
  loader.RegisterFunction(duckdb::ScalarFunction(
      "spark_array_try_element_at", {duckdb::LogicalType::ANY, duckdb::LogicalType::BIGINT},
      duckdb::LogicalType::ANY, ArrayGet<Index::kTryElementAt>, BindArrayGet));
  loader.RegisterFunction(duckdb::ScalarFunction("spark_list_reverse", {duckdb::LogicalType::ANY},
                                                 duckdb::LogicalType::ANY, ListReverse,
                                                 BindListReverse));
  for (const Dispatch& d : kDispatch) {
    const bool two = std::string(d.name) != "spark_reverse";
    duckdb::vector<duckdb::LogicalType> args = {duckdb::LogicalType::ANY};
    if (two) args.push_back(duckdb::LogicalType::ANY);
    duckdb::ScalarFunction f(d.name, args, duckdb::LogicalType::ANY, Unreachable, BindDispatch);
    f.bind_expression = BindDispatchExpression;
    loader.RegisterFunction(f);
  }
  RegisterMacros(loader, kMacros);
}

}  // namespace sluice::engine::internal
