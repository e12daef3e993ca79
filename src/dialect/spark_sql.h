// The Spark SQL dialect in the engine's words: the one place where Spark's spellings become
// DuckDB's, shared by everything that accepts Spark SQL (the SQL front end's statements, batch
// and streaming alike, and the C++ API's SelectExpr / Where / WithColumn / Agg / Join strings;
// docs/sql-frontend.md, docs/sql-reference.md "Spark functions").
//
// The rules, each a file with its table of spellings (rules.h):
//   arithmetic.cc a / b, a % b with Spark's result types and ANSI errors (division by zero)
//   windows.cc    window(ts, size) in a batch statement, the group GROUP BY window(...) names
//   literals.cc   5L 5S 5Y 1.5D 1.5F 1.50BD, X'..', backslash escapes, r'raw', 'a' 'b', "text"
//   casts.cc      CAST / TRY_CAST / :: to STRING and BINARY (UTF-8), Spark's type names (types.h)
//   names.cc      offset / window as column names
//   functions.cc  array(...), map(k, v, ...), struct(x AS a, ...), filter, transform
//   clauses.cc    LEFT SEMI / ANTI JOIN, SORT BY, CLUSTER BY, DISTRIBUTE BY, MINUS, * EXCEPT, div,
//                 RLIKE, LATERAL VIEW [OUTER] explode
//   datetime.cc   dateadd / timestampadd / datediff / timestampdiff (UNIT, ...), EXTRACT(SECOND ..)
//   json_paths.cc parse_json(j):a.b[0]::INT
//   from_json.h   from_json(expr, 'DDL schema')
//
// The statement is read once with Spark's lexing (string literals with backslash escapes) and
// all rules' edits are applied together; comments are never touched, and a string literal only
// to be re-spelled in the engine's quoting. Text the tokenizer cannot read is returned as is
// (the engine reports the syntax error). Thread-safe (no state).
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "engine/engine.h"

namespace sluice::dialect {

// A statement in Spark's dialect -> the engine's. `conn` resolves from_json schemas' types.
// InvalidArgument for what Spark accepts and Sluice cannot give Spark's answer to (from_json's
// options, a schema that is not a literal), naming the position.
Result<std::string> RewriteSparkSql(engine::Connection* conn, std::string_view sql);

// `name` as Spark quotes a name: `a``b` (in Spark's dialect "a" is a string literal). For the
// Spark text Sluice writes itself (the C++ API's Select(columns)).
std::string QuoteSparkName(std::string_view name);

// An expression (a SELECT item, a condition) in Spark's dialect -> the engine's. window(...) is
// left as written (the C++ API's streaming planner plans it; windows.cc is for statements).
Result<std::string> RewriteSparkExpression(engine::Connection* conn, std::string_view expr);

}  // namespace sluice::dialect
