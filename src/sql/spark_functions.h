// Spark SQL functions whose DuckDB namesakes differ, rewritten in a statement's text before it
// runs (batch and streaming statements alike; docs/sql-reference.md "Spark functions").
//
//   from_json(expr, 'id BIGINT, tags ARRAY<STRING>, ...')
//     Spark's from_json with a DDL schema string (PERMISSIVE): the STRUCT of the schema's
//     fields; a field whose JSON value does not fit its type is NULL; text that is not JSON
//     gives a struct of NULL fields, and a field named `_corrupt_record` (STRING) in the schema
//     receives the raw text then (Spark's columnNameOfCorruptRecord); NULL input gives NULL.
//     DuckDB's own from_json(expr, '{"json": "structure"}') (second argument starting with '{'
//     or '[') is left as is.
//
// The rewrite works on tokens: comments and string literals are never touched; the schema must
// be a string literal. Errors (InvalidArgument) name the function, the position and the bad
// schema.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "engine/engine.h"

namespace sluice::sql {

// `conn` resolves the schema's types. Returns `sql` unchanged when nothing is to be rewritten.
Result<std::string> RewriteSparkFunctions(engine::Connection* conn, std::string_view sql);

}  // namespace sluice::sql
