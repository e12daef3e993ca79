// Internal to src/engine: Spark's JSON functions as macros of the engine's database
// (docs/sql-reference.md "Spark functions").
//
//   get_json_object(json, path)  the value at the JSONPath as text (a string unquoted, an object
//                                or array as compact JSON); NULL for a missing path or text that
//                                is not JSON. $['a b'] keys; a wildcard path ($.a[*].b) gives
//                                its matches as a JSON array, one match alone as itself, none
//                                NULL.
//   spark_to_json(x)             Spark's to_json (the dialect renames to_json(x)): struct fields
//                                that are NULL left out, timestamps yyyy-MM-ddTHH:mm:ss.SSSZ in
//                                UTC, dates yyyy-MM-dd, doubles as Java prints them, decimals with
//                                their scale, binaries in base64, map keys as text.
//   schema_of_json(json)         Spark's DDL of the JSON's type: STRUCT<a: BIGINT, b: STRING>,
//                                fields sorted by name, integers BIGINT, other numbers DOUBLE,
//                                NULL STRING, the element types of an array merged (BIGINT and
//                                DOUBLE to DOUBLE, others to STRING). Text that is not JSON is an
//                                error.
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
