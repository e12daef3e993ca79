// Parses the streaming statements of docs/sql-reference.md into streaming_statements.h trees.
#pragma once

#include <optional>
#include <string_view>

#include "common/result.h"
#include "sql/streaming_statements.h"
#include "stream/trigger.h"

namespace sluice::plan {
class TokenCursor;
}

namespace sluice::sql {

// Parses `sql` (one statement, an optional trailing ';').
// - nullopt: not a streaming statement.
// - a statement: its tree, with the query as the original text.
// - InvalidArgument: a streaming statement with a syntax error, saying what was expected and
//   where; NotSupported for TRIGGER CONTINUOUS (with advice).
Result<std::optional<StreamingStatement>> ParseStreamingStatement(std::string_view sql);

// The TRIGGER clause after the keyword TRIGGER (of CREATE STREAMING TABLE and CREATE SINK):
// AVAILABLE NOW | PROCESSING TIME 'interval' | ONCE | CONTINUOUS ['interval'].
Result<stream::Trigger> ParseTriggerClause(plan::TokenCursor& cursor);

}  // namespace sluice::sql
