// Internal to src/engine: Spark's JSON functions as macros of the engine's database
// (docs/sql-reference.md "Spark functions").
//
//   get_json_object(json, path)  the value at the JSONPath as text (a string unquoted, an object
//                                or array as compact JSON); NULL for a missing path or text that
//                                is not JSON. Wildcard paths ($.a[*].b) are refused.
//   json_object_keys(json)       the keys of a JSON object; NULL for other JSON or not JSON.
//   spark_json_array_length(json) the length of a JSON array; NULL for other JSON or not JSON
//                                (DuckDB's json_array_length fails on text that is not JSON: the
//                                dialect's rename table maps the Spark name).
//
// Include only from src/engine/*.cc.
#pragma once

#include "duckdb.hpp"
#include "duckdb/main/extension/extension_loader.hpp"

namespace sluice::engine::internal {

// Throws DuckDB exceptions.
void RegisterSparkJson(duckdb::ExtensionLoader& loader);

}  // namespace sluice::engine::internal
