// Internal to src/engine: Spark's reading of JSON numbers and booleans in from_json, as a
// function of the engine's database. DuckDB's json_transform casts a JSON string to a number
// ("12" into an INT field is 12); Spark's JSON parser takes only a JSON number for a number field
// and only true / false for a BOOLEAN one, and gives NULL otherwise. The dialect's from_json
// (dialect/from_json.cc) reads those fields as JSON text and hands the result to:
//
//   spark_json_numbers(x, 'T')   x: a STRUCT / LIST / MAP shaped as the DuckDB type T, each
//       field that T has as a number or a BOOLEAN held as JSON text instead; the result is of
//       type T: such a field is its JSON token read as Spark reads it, NULL for another token:
//         integral     an integer token in the type's range (1.0, 1e3, "12", true: NULL)
//         DOUBLE/FLOAT any number token; the strings "NaN", "Infinity", "+Infinity",
//                      "-Infinity", "INF", "+INF", "-INF" (Spark's allowNonNumericNumbers)
//         DECIMAL      a number token that fits, rounded half up to the scale
//         BOOLEAN      true / false
//       An array or a map with an element that is not read is NULL as a whole (Spark fails the
//       field); a struct keeps its other fields. Every other field is passed through.
//
// Include only from src/engine/*.cc.
#pragma once

#include "duckdb.hpp"
#include "duckdb/main/extension/extension_loader.hpp"

namespace sluice::engine::internal {

// Throws DuckDB exceptions.
void RegisterSparkJsonNumbers(duckdb::ExtensionLoader& loader);

}  // namespace sluice::engine::internal
