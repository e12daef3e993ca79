// Internal to src/engine: Spark's string, NULL, math and regexp functions as functions and macros
// of the engine's database (docs/sql-reference.md "Spark functions").
//
//   spark_length(x)      Spark's length: characters (code points) of a STRING, bytes of a BINARY,
//                        as INT (DuckDB's length refuses a BLOB).
//   spark_concat_ws(sep, ...)  Spark's concat_ws: strings and the elements of string arrays,
//                        NULLs skipped (DuckDB's prints an array as '[a, b]').
//   spark_java_replacement(r)  a java.util.regex replacement ($1, \$) as RE2's (\1, $).
//   spark_java_regex(p)  a Java regex as RE2 reads it: named groups (?<name>...) become
//                        (?P<name>...); what RE2 lacks (lookaround, possessive quantifiers,
//                        backreferences) stays and RE2 refuses it with its own error.
//   Macros under Spark's names (nvl, nvl2, isnull, initcap, locate, substring_index, regexp_like,
//   sort_array, ...) and under spark_<name> where DuckDB has the name with other semantics (length,
//   concat_ws, regexp_replace, split, array_sort: NULLs last): the dialect's rename table maps
//   those.
//
// Include only from src/engine/*.cc.
#pragma once

#include <string>
#include <string_view>

#include "duckdb.hpp"
#include "duckdb/main/extension/extension_loader.hpp"

namespace sluice::engine::internal {

// Throws DuckDB exceptions.
void RegisterSparkScalars(duckdb::ExtensionLoader& loader);

std::string JavaReplacementToRe2(std::string_view replacement);
std::string JavaRegexToRe2(std::string_view regex);

}  // namespace sluice::engine::internal
