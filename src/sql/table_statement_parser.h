// Parses the Delta table statements of docs/sql-reference.md into table_statements.h trees.
#pragma once

#include <optional>
#include <string_view>

#include "common/result.h"
#include "sql/table_statements.h"

namespace sluice::sql {

// Parses `sql` (one statement, an optional trailing ';').
// - nullopt: not a table statement (SELECT, SET, COPY, CREATE VIEW/MACRO/TEMP TABLE,
//   DESCRIBE <query>, ...): the engine runs it as it is.
// - a statement: its tree, with expressions and queries as the original text.
// - InvalidArgument: a table statement with a syntax error; the message says what was expected
//   and where ("syntax error at line 1, column 15: expected SET, found 'WHERE'").
Result<std::optional<TableStatement>> ParseTableStatement(std::string_view sql);

}  // namespace sluice::sql
