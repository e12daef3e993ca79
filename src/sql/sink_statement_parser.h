// Parses the sink statements of sink_statements.h.
#pragma once

#include <optional>
#include <string_view>

#include "common/result.h"
#include "sql/sink_statements.h"

namespace sluice::sql {

// Parses `sql` (one statement, an optional trailing ';').
// - nullopt: not a sink statement.
// - a statement: its tree.
// - InvalidArgument: a sink statement with a syntax error, saying what was expected and where
//   (an option given twice is one too, naming it).
Result<std::optional<SinkStatement>> ParseSinkStatement(std::string_view sql);

}  // namespace sluice::sql
