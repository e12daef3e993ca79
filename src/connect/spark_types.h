// Spark's view of the engine's column types, for Spark Connect: the Arrow type a column is sent
// as, the spark.connect.DataType of a schema (AnalyzePlan, ExecutePlanResponse.schema) and
// Spark's SQL name of a type (for CAST text).
//
// Types map as Spark's own Arrow conversion does: BOOLEAN boolean, TINYINT/SMALLINT/INTEGER/
// BIGINT byte/short/integer/long, FLOAT float, DOUBLE double, DECIMAL(p,s) decimal(p,s) (a
// HUGEINT as decimal(38,0)), VARCHAR string, BLOB binary, DATE date, the NULL literal's type void.
// TIMESTAMP WITH TIME ZONE and TIMESTAMP are both timestamp (Arrow timestamp[us, UTC]): the Spark
// dialect holds Spark's TIMESTAMP values of literals, casts and functions as the engine's
// zone-less TIMESTAMP read in UTC (as CREATE TABLE stores them, and as spark_typeof names them),
// so that type is an instant here too, the same microseconds. Spark's TIMESTAMP_NTZ, which the
// dialect also makes a zone-less TIMESTAMP, therefore reaches clients as timestamp
// (docs/pyspark.md, "What differs"). Other types (TIME, INTERVAL, UUID, nested types) are refused
// with NotSupported naming the column and the type, never sent in another form.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "common/result.h"
#include "connect/arrow_ipc.h"
#include "engine/types.h"

namespace spark::connect {
class DataType;
}

namespace sluice::connect {

// The Arrow type column `column` of type `type` is sent as.
Result<ArrowType> ArrowTypeOf(const engine::DataType& type, const std::string& column);

// `schema` as a Spark struct type.
Status SchemaToProto(const engine::Schema& schema, spark::connect::DataType* out);

// Spark's SQL name of the type ("BIGINT", "STRING", "DECIMAL(10,2)", "TIMESTAMP_NTZ").
Result<std::string> SparkTypeName(const engine::DataType& type, const std::string& column);

// Spark's typeName of the type, as printSchema shows it ("long", "integer", "string",
// "decimal(10,2)", "timestamp").
Result<std::string> SparkTypeDisplayName(const engine::DataType& type, const std::string& column);

// Spark's SQL name of a spark.connect.DataType (a CAST's target); NotSupported for the kinds
// the plan translator does not take.
Result<std::string> ProtoTypeToSql(const spark::connect::DataType& type);

}  // namespace sluice::connect
