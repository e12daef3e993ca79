// Spark's from_json with a DDL schema string, in the engine's words (dialect/spark_sql.h):
//
//   from_json(expr, 'id BIGINT, tags ARRAY<STRING>, ...')
//     Spark's from_json (PERMISSIVE): the STRUCT of the schema's fields; a field whose JSON
//     value does not fit its type is NULL (a number field takes a JSON number only, a BOOLEAN
//     true / false only: "12" is NULL, engine/spark_json_numbers.h); text that is not JSON
//     gives a struct of NULL fields,
//     and a field named `_corrupt_record` (STRING) in the schema receives the raw text then
//     (Spark's columnNameOfCorruptRecord); NULL input gives NULL. DuckDB's own
//     from_json(expr, '{"json": "structure"}') (second argument starting with '{' or '[') is
//     left as is.
//
// The schema must be a string literal; errors (InvalidArgument) name the function, the position
// and the bad schema. Options (a third argument) are refused.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "engine/engine.h"

namespace sluice::dialect {

// `conn` resolves the schemas' types. `sql` unchanged when it has no from_json.
Result<std::string> RewriteFromJson(engine::Connection* conn, std::string_view sql);

}  // namespace sluice::dialect
