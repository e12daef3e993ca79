// Internal to src/engine: Spark's string functions that DuckDB lacks or answers otherwise, as
// functions and macros of the engine's database (docs/sql-reference.md "Spark functions"). The
// dialect's rename table (src/dialect/functions.cc) maps Spark's names to the spark_<name> ones.
//
//   spark_hash(x, ...)    Spark's hash: Murmur3 x86 32-bit, seed 42, each argument's hash the
//                         seed of the next (NULLs skipped), INT. Integers, floating point (by
//                         their bits), DECIMAL(p <= 18), DATE, TIMESTAMP, STRING, BINARY; other
//                         types are an error naming the type.
//   xxhash64(x, ...)      Spark's xxhash64 (XXH64, seed 42), BIGINT; the same types.
//   crc32(s)              CRC-32 of a STRING's UTF-8 bytes or a BINARY, BIGINT.
//   soundex(s)            Spark's soundex (the text unchanged when it does not start with A-Z).
//   spark_regex_with_group(p, g)  the regex p when it has a capturing group g (0: the whole
//                         match), else Spark's INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX error;
//                         spark_regexp_extract(_all) check their group with it.
//   Macros: spark_decode / spark_encode (UTF-8; other charsets are an error naming them),
//   spark_octet_length (UTF-8 bytes), spark_replace (two arguments), spark_substring (position 0
//   counts as 1, a negative length gives ''), overlay, mask (one argument), regexp_instr.
//
// Include only from src/engine/*.cc.
#pragma once

#include "duckdb.hpp"
#include "duckdb/main/extension/extension_loader.hpp"

namespace sluice::engine::internal {

// Throws DuckDB exceptions.
void RegisterSparkStringFunctions(duckdb::ExtensionLoader& loader);

}  // namespace sluice::engine::internal
