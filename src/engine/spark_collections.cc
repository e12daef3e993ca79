#include "engine/spark_collections.h"

#include "duckdb/common/vector_operations/unary_executor.hpp"
#include "duckdb/planner/expression.hpp"
#include "engine/spark_macros.h"

namespace sluice::engine::internal {
namespace {

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
  RegisterMacros(loader, kMacros);
}

}  // namespace sluice::engine::internal
