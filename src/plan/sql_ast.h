// DuckDB's parse tree of a SELECT as JSON: `json_serialize_sql(sql)` gives the tree and
// `json_deserialize_sql(tree)` the SQL of a (rewritten) tree, so the analyzer never re-implements
// DuckDB's grammar (docs/streaming-plan.md §2). Plus the tree helpers the planners share.
//
// Spark's window functions: before parsing, RewriteWindowCalls turns `window(` /
// `session_window(` into `__sluice_window(` / `__sluice_session_window(` and quotes bare
// `window` / `session_window` identifiers (WINDOW is a DuckDB keyword), so `window.start` is the
// column reference ["window", "start"].
// It also turns Spark's `LEFT SEMI JOIN` / `LEFT ANTI JOIN` into DuckDB's `SEMI JOIN` / `ANTI
// JOIN`.
//
// Thread safety: a SqlAst uses one Connection: one thread at a time. The helpers are pure.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "engine/engine.h"

namespace sluice::plan {

using Json = nlohmann::json;

inline constexpr char kWindowFunction[] = "__sluice_window";
inline constexpr char kSessionWindowFunction[] = "__sluice_session_window";

// The text with Spark's window calls renamed and bare window identifiers quoted (see above).
Result<std::string> RewriteWindowCalls(std::string_view sql);

class SqlAst {
 public:
  static Result<std::unique_ptr<SqlAst>> Open(engine::Engine* engine);

  // The tree of one SELECT statement: json_serialize_sql(sql).statements[0].node. InvalidArgument
  // with DuckDB's parser message for a syntax error or when `sql` is not exactly one SELECT.
  Result<Json> ParseSelect(std::string_view sql);
  // SQL text of a SELECT node tree (the inverse of ParseSelect).
  Result<std::string> ToSql(const Json& select_node);
  // SQL text of one expression tree (as DuckDB prints it, which is also the column name DuckDB
  // gives an unaliased select item).
  Result<std::string> ExpressionToSql(const Json& expression);
  // Runs a constant query (evaluating literals at plan time, e.g. an interval's length).
  Result<engine::Batch> Query(std::string_view sql) { return conn_->Query(sql); }

 private:
  explicit SqlAst(std::unique_ptr<engine::Connection> conn) : conn_(std::move(conn)) {}
  std::unique_ptr<engine::Connection> conn_;
  Json select_template_;  // the tree of "SELECT 1", for ExpressionToSql
};

// ---- Tree helpers (DuckDB's ParsedExpression JSON: "class", "type", "alias", ...) ----

// True when a and b are the same expression, ignoring aliases and query locations; column names
// and function names compare case-insensitively.
bool SameExpression(const Json& a, const Json& b);
// Calls fn on `expr` and every expression below it (pre-order), not entering subqueries. fn
// returns false to skip the children of that node.
void VisitExpression(const Json& expr, const std::function<bool(const Json&)>& fn);
// Rewrites bottom-up: fn returns a replacement for a node or nullopt to keep it (its children
// already rewritten). Does not enter subqueries.
Json RewriteExpression(const Json& expr, const std::function<std::optional<Json>(const Json&)>& fn);
// A COLUMN_REF expression of `names` (["window", "start"] or ["x"]).
Json MakeColumnRef(const std::vector<std::string>& names, const std::string& alias = "");
// For a COLUMN_REF: its names; else empty.
std::vector<std::string> ColumnRefNames(const Json& expr);
// For a FUNCTION: its lower-cased name; else "".
std::string FunctionName(const Json& expr);
// True for an aggregate function call (any of DuckDB's usual aggregate names or count(*)).
bool IsAggregateCall(const Json& expr);
// True when the expression contains an aggregate call (not counting subqueries).
bool ContainsAggregate(const Json& expr);
// True when the expression contains a subquery.
bool ContainsSubquery(const Json& expr);
// The AND conjuncts of a WHERE expression (one element when it is not an AND).
std::vector<Json> Conjuncts(const Json& expr);

}  // namespace sluice::plan
