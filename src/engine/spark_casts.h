// Internal to src/engine: Spark's casts, types and type-dependent functions, as functions of the
// engine's database (docs/differences.md). Each function below looks at its argument's type when
// the query is bound and becomes the engine's expression for that type (DuckDB's
// bind_expression): no cost per row where nothing differs.
//
//   spark_cast_input(x, 'T'), spark_try_cast_input(x, 'T')   the dialect (dialect/casts.cc)
//       writes CAST(x AS T) as CAST(spark_cast_input(x, 'T') AS T) for T an integral type,
//       DOUBLE / FLOAT, DATE, TIMESTAMP, an array, a map or a struct; what Spark reads
//       differently from DuckDB's cast:
//         source               target            Spark's rule
//         DOUBLE/FLOAT/DECIMAL integral          truncates toward zero (DuckDB rounds)
//         STRING               integral          [+-]digits only, blanks trimmed (ANSI): '1.5',
//                                                '1e3', '0x10', '1_000' are CAST_INVALID_INPUT
//         STRING               DOUBLE / FLOAT    a trailing d / f is allowed ('2.5d')
//         STRING               DATE              yyyy, yyyy-[m]m, yyyy-[m]m-[d]d, then anything
//                                                after ' ' or 'T'
//         STRING               TIMESTAMP         a date as above, [h]h[:[m]m[:[s]s[.f]]], a zone
//                                                (Z, +hh[:mm], UTC, GMT+hh:mm) converted to UTC
//         TIMESTAMP            integral / DOUBLE seconds since the epoch (floor / with fraction)
//         numbers              TIMESTAMP         seconds since the epoch
//         STRING               array, map, struct refused (DATATYPE_MISMATCH), also by try_
//       anything else: x unchanged (DuckDB's cast decides). A zone in the text needs the session
//       time zone UTC (the result is a TIMESTAMP without zone): else an error says so. The try_
//       variant gives NULL where the other fails.
//   spark_typeof(x)      Spark's name of x's type: int, bigint, decimal(10,2), string, binary,
//                        date, timestamp, array<int>, map<string,int>, struct<a:int,b:string>.
//   spark_ceil(x), spark_floor(x)   a BIGINT for a DOUBLE or FLOAT (DuckDB's ceil otherwise).
//   spark_conv(s, from, to)  Spark's conv: the number s in base `from` written in base `to`.
//   SparkText(value)     Spark's CAST(x AS STRING) of a value (spark_string uses it): doubles as
//                        Java prints them (1.0E20, 1.0E-4, 1.5), maps {a -> 1}, structs {1, x},
//                        arrays [1, null], timestamps without zone.
//
// Include only from src/engine/*.cc.
#pragma once

#include <string>

#include "duckdb.hpp"
#include "duckdb/main/extension/extension_loader.hpp"

namespace sluice::engine::internal {

// Throws DuckDB exceptions.
void RegisterSparkCasts(duckdb::ExtensionLoader& loader);

// Java's Double.toString / Float.toString, as Spark casts them to STRING.
std::string SparkDoubleText(double v);
std::string SparkFloatText(float v);

// Spark's name of an engine type (typeof, error messages).
std::string SparkTypeName(const duckdb::LogicalType& type);

// Spark's text of a value (not NULL at the top). A TIMESTAMP WITH TIME ZONE is written as its UTC
// wall clock: callers check that the session time zone is UTC.
std::string SparkText(const duckdb::Value& v);

// True when the client's session time zone is UTC (or GMT).
bool SessionIsUtc(duckdb::ClientContext& context);

}  // namespace sluice::engine::internal
