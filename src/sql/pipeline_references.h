// What a pipeline dataset's query reads (docs/pipelines.md "The graph"): the names of the tables
// it reads as streams (`FROM STREAM t`, `STREAM(t)`, `STREAM table_changes('t', ...)`) and as
// batch relations (a name right after FROM or JOIN, `table_changes('t', ...)` without STREAM),
// each lower-cased, in order of appearance, without repeats. `LIVE.` must already be stripped
// (pipeline_live.h).
//
// Conservative by design: a name is reported only where it can only be a relation (after FROM
// or JOIN at the level of a SELECT, not inside a function call such as EXTRACT(x FROM ts)),
// qualified names (a.b, delta.`path`) and CTE names are skipped, so the pipeline graph never
// refuses a valid query for a name that is not a table.
//
// Thread safety: pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "dialect/tokenizer.h"

namespace sluice::sql {

struct QueryReads {
  std::vector<std::string> streams;  // read as STREAM
  std::vector<std::string> tables;   // read as batch relations
};

// InvalidArgument (with line and column inside `query`) for a malformed STREAM relation or an
// unterminated string.
Result<QueryReads> ReadsOfQuery(std::string_view query);

// Which open parentheses of a left-to-right token walk are subqueries: FROM inside a function
// call's parentheses is not a FROM clause (EXTRACT(year FROM ts), TRIM(BOTH 'x' FROM s)). Used by
// every walk that looks for relation names after FROM / JOIN (ReadsOfQuery, InlineViews).
class SubqueryParentheses {
 public:
  // Takes `t` when it is '(' (`next` is the token after it) or ')' and returns true; any other
  // token is left to the caller (false).
  bool Step(const dialect::Token& t, const dialect::Token& next);
  // True outside every parenthesis, or directly inside a subquery's.
  bool AtQueryLevel() const { return open_.empty() || open_.back(); }

 private:
  std::vector<bool> open_;  // one per open '(': is it a subquery
};

}  // namespace sluice::sql
