// LocalRelationSql: a Spark Connect LocalRelation (spark.createDataFrame of Python rows, a pandas
// DataFrame or an Arrow table) as one Spark SQL query of literal rows, so that it composes with
// every other relation of the plan translator (plan_translator.h) and with temporary views.
//
// The rows come as an Arrow IPC stream (connect/arrow_ipc_reader.h); the client's Spark schema,
// when sent, is Spark's JSON of a struct type ({"type":"struct","fields":[...]}) and gives the
// column names and types: each column is CAST to its Spark type, as Spark's server casts the
// client's Arrow columns. Without a schema the Arrow field names and types are used. A schema
// without data is an empty relation of those columns.
//
//   SELECT CAST(_c0 AS BIGINT) AS id, CAST(_c1 AS STRING) AS s
//   FROM (VALUES (CAST(1 AS BIGINT), 'a'), (NULL, 'b')) AS _local(_c0, _c1)
//
// Values are written as the literals of connect/plan_translator.h's LiteralToSql (exact: doubles
// with 17 digits, decimals as their digits, timestamps to the microsecond). Nested Spark types,
// a DDL schema string and cached local relations are refused with NotSupported naming them.
// Meant for the small data createDataFrame is used for: every row is SQL text.
//
// Thread safety: a pure function.
#pragma once

#include <string>

#include "common/result.h"

namespace spark::connect {
class LocalRelation;
}

namespace sluice::connect {

Result<std::string> LocalRelationSql(const spark::connect::LocalRelation& local);

// Spark's SQL name of a type in Spark's JSON form ("long" -> BIGINT, "decimal(10,2)" ->
// DECIMAL(10,2), "void" -> VOID); NotSupported for nested types. Exposed for tests.
Result<std::string> SparkJsonTypeToSql(const std::string& json_type_text);

}  // namespace sluice::connect
