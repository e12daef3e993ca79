#include "engine/spark_json.h"

#include "engine/spark_macros.h"

namespace sluice::engine::internal {
namespace {

const duckdb::DefaultMacro kMacros[] = {
    {DEFAULT_SCHEMA,
     "get_json_object",
     {"j", "p", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN contains(p, '*') THEN error('get_json_object: wildcard paths (' || p || ') are "
     "not supported') WHEN json_valid(j) THEN json_extract_string(j, p) END"},
    {DEFAULT_SCHEMA,
     "json_object_keys",
     {"j", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN json_valid(j) AND json_type(j) = 'OBJECT' THEN json_keys(j) END"},
    {DEFAULT_SCHEMA,
     "spark_json_array_length",
     {"j", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN json_valid(j) AND json_type(j) = 'ARRAY' THEN CAST(json_array_length(j) AS "
     "INTEGER) END"},
};

}  // namespace

void RegisterSparkJson(duckdb::ExtensionLoader& loader) { RegisterMacros(loader, kMacros); }

}  // namespace sluice::engine::internal
