// Internal to src/engine: spark_string(x), Spark's CAST(x AS STRING), and spark_binary(x), its
// CAST(x AS BINARY): scalar functions of the engine's database (every connection sees them). The
// SQL front end rewrites Spark's spellings of the casts (CAST(x AS STRING), x::STRING, string(x),
// CAST(x AS BINARY), ...: dialect/casts.cc) into them; the SQL that Sluice generates itself
// keeps DuckDB's own casts.
//
//   spark_string(BLOB)  the bytes as UTF-8 text, as Spark's CAST(binary AS STRING) reads them
//                       (DuckDB's CAST(blob AS VARCHAR) escapes them instead: '"' -> '\x22').
//                       Bytes that are not valid UTF-8 are an error naming the value (hex) and
//                       the first bad byte: Spark keeps such bytes in its string (hex() and
//                       length() of the result see them), which a DuckDB VARCHAR cannot hold.
//   spark_string(x)     CAST(x AS VARCHAR) for every other type.
//   spark_binary(STRING) the text's UTF-8 bytes, as Spark's CAST(string AS BINARY) (DuckDB's
//                       CAST(varchar AS BLOB) reads '\x41' escapes and refuses non-ASCII text).
//   spark_binary(x)     CAST(x AS BLOB) for every other type (a BLOB stays as it is).
//   NULL gives NULL.
//
// Include only from src/engine/*.cc.
#pragma once

#include "duckdb.hpp"

namespace sluice::engine::internal {

inline constexpr char kSparkStringFunction[] = "spark_string";
inline constexpr char kSparkBinaryFunction[] = "spark_binary";

// Registers spark_string and spark_binary in `db`'s system catalog. Throws DuckDB exceptions
// (callers use CatchAll).
void RegisterSparkString(duckdb::DatabaseInstance& db);

}  // namespace sluice::engine::internal
