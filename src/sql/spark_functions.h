// Spark SQL spellings whose DuckDB namesakes differ, rewritten in a statement's text before it
// runs (batch and streaming statements alike; docs/sql-reference.md "Spark functions"). The
// one place where Spark's spellings become the engine's:
//
//   Spark                              rewritten to               why
//   CAST(x AS STRING)                  spark_string(x)            Spark's CAST(binary AS STRING)
//   TRY_CAST(x AS STRING)              spark_string(x)            decodes UTF-8; DuckDB's cast of
//   x::STRING, string(x)               spark_string(x)            a BLOB escapes bytes ('"' ->
//   (VARCHAR and VARCHAR(n) alike)                                '\x22'); engine/spark_string.h
//   CAST(x AS BINARY), x::BINARY,      spark_binary(x)            Spark encodes the text as UTF-8;
//   TRY_CAST(x AS BINARY), binary(x)                              DuckDB refuses non-ASCII text
//   X'7B22' (a binary literal)         unhex('7B22')              DuckDB reads X'..' as text
//   offset, window as a column name    "offset", "window"         reserved words in DuckDB's
//                                                                 parser, not in Spark SQL
//   from_json(expr, 'a INT, ...')      json_transform(...)        see below
//
//   spark_string is a function of the engine, not a replacement of DuckDB's BLOB -> VARCHAR
//   cast: the SQL Sluice generates itself relies on that cast's escaping (the Delta writer's
//   partition values and binary column statistics, rendered by CAST(... AS VARCHAR); the CLI's
//   and the SQL logic test runner's text of a BLOB), and a user's statement is the only text
//   written in Spark's dialect. A BLOB that is not valid UTF-8 is an error (Spark keeps the
//   bytes in its string; a DuckDB VARCHAR cannot hold them). A TRY_CAST gives the same error: a
//   NULL would silently differ from Spark's answer.
//
//   offset / window are quoted where a column name stands: after SELECT, DISTINCT, a comma, an
//   opening parenthesis, BY, WHERE, HAVING, QUALIFY, ON, AND, OR, NOT, CASE, WHEN, THEN, ELSE, IN,
//   IS, LIKE, BETWEEN, AS or an operator, and not before '(' (window(ts, ...) is the function). The
//   clauses LIMIT n OFFSET m and WINDOW w AS (...) follow an expression or a table and stay
//   keywords. Elsewhere (e.g. SELECT a offset FROM t) write "offset" or `offset`.
//
//   from_json(expr, 'id BIGINT, tags ARRAY<STRING>, ...')
//     Spark's from_json with a DDL schema string (PERMISSIVE): the STRUCT of the schema's
//     fields; a field whose JSON value does not fit its type is NULL; text that is not JSON
//     gives a struct of NULL fields, and a field named `_corrupt_record` (STRING) in the schema
//     receives the raw text then (Spark's columnNameOfCorruptRecord); NULL input gives NULL.
//     DuckDB's own from_json(expr, '{"json": "structure"}') (second argument starting with '{'
//     or '[') is left as is.
//
// The rewrites work on tokens: comments and string literals are never touched; the schema must
// be a string literal. Errors (InvalidArgument) name the function, the position and the bad
// schema.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "engine/engine.h"

namespace sluice::sql {

// `conn` resolves from_json schemas' types. Returns `sql` unchanged when nothing is to be
// rewritten.
Result<std::string> RewriteSparkFunctions(engine::Connection* conn, std::string_view sql);

}  // namespace sluice::sql
