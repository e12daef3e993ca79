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
#include <set>
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

// True for an expression node (an object with a "class" and a "type"), not a table ref or a
// query node.
bool IsExpressionObject(const Json& j);
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
// The AND of `conjuncts` (a CONJUNCTION_AND; the one conjunct itself when there is one).
Json MakeConjunctionAnd(const std::vector<Json>& conjuncts);
// A call of unnest(`column`) (a plain function call with no alias, filter or ORDER BY).
Json MakeUnnestCall(const std::string& column);
// True for the keys of a node that annotate it rather than hold a child ("alias",
// "query_location"): a rewrite that walks a node's keys leaves them as they are.
bool IsAnnotationKey(const std::string& key);
// `expr` without its alias (for printing the expression itself, as a description).
Json WithoutAlias(Json expr);
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

// ---- Typed accessors: the keys of DuckDB's parse tree, spelled only here (sql_ast_nodes.cc) ----
//
// The planners read and build json_serialize_sql's tree through these, so a DuckDB upgrade that
// changes the tree's shape breaks here and in the golden tests of sql_ast_test.cc (one test per
// construct), not across plan/. A reader never inserts a key: for an absent key (or a value of
// another JSON type) it gives null, "" or the stated default; null and an absent list iterate as
// empty. The `Json&` overloads are writers: they insert the key when absent (operator[]).

// Any node: its "type" (a query node's "SELECT_NODE", a table ref's "JOIN", an expression's
// "COMPARE_EQUAL", a modifier's "LIMIT_MODIFIER", ...); "" when absent or not a string.
std::string NodeType(const Json& node);
bool IsSelectNode(const Json& node);  // type SELECT_NODE
// An expression's "class" ("COLUMN_REF", "CONSTANT", "FUNCTION", "CAST", "COMPARISON", "WINDOW",
// "STAR", "SUBQUERY", ...); "" when absent.
std::string ExpressionClass(const Json& expr);
// The "alias" of an expression or a table ref ("" when none).
std::string Alias(const Json& node);
void SetAlias(Json& node, const std::string& alias);

// SELECT_NODE.
const Json& SelectList(const Json& node);
Json& SelectList(Json& node);
const Json& FromTable(const Json& node);
Json& FromTable(Json& node);
const Json& WhereClause(const Json& node);  // null when none
Json& WhereClause(Json& node);
const Json& GroupExpressions(const Json& node);
Json& GroupExpressions(Json& node);
const Json& GroupSets(const Json& node);
Json& GroupSets(Json& node);
const Json& Having(const Json& node);  // null when none
Json& Having(Json& node);
const Json& Qualify(const Json& node);  // null when none
Json& Qualify(Json& node);
const Json& Modifiers(const Json& node);  // DISTINCT / ORDER / LIMIT modifiers, in order
Json& Modifiers(Json& node);
// True for GROUP BY ALL (DuckDB's FORCE_AGGREGATES).
bool GroupsByAll(const Json& node);
// Makes `node` a plain projection of its FROM and WHERE: no GROUP BY (sets), HAVING, QUALIFY,
// modifiers or GROUP BY ALL.
void DropAggregationAndModifiers(Json& node);

// SET_OPERATION_NODE: its inputs (left, right and any further children), in order.
std::vector<const Json*> SetOperationInputs(const Json& node);
std::string SetOperationType(const Json& node);  // "UNION", "UNION_BY_NAME", "EXCEPT", ...
bool SetOperationAll(const Json& node);          // UNION ALL (true when absent, as DuckDB's)

// Result modifiers (elements of Modifiers()): their type is NodeType().
bool HasModifier(const Json& node, std::string_view type);
const Json& DistinctOnTargets(const Json& modifier);  // DISTINCT_MODIFIER: empty for DISTINCT
const Json& ModifierOrders(const Json& modifier);     // ORDER_MODIFIER: OrderBy nodes
const Json& LimitCount(const Json& modifier);         // LIMIT_MODIFIER: the LIMIT expression
const Json& LimitOffset(const Json& modifier);        // LIMIT_MODIFIER: the OFFSET (null: none)
// An OrderBy node (ORDER BY, a window's ORDER BY): its expression, "type" ("ASCENDING",
// "DESCENDING" or "ORDER_DEFAULT" when absent) and "null_order" (default "ORDER_DEFAULT").
const Json& OrderExpression(const Json& order);
std::string OrderType(const Json& order);
std::string OrderNullOrder(const Json& order);

// Table refs (FromTable()): BASE_TABLE, JOIN, SUBQUERY, TABLE_FUNCTION, ...
std::string BaseTableName(const Json& ref);
// For a BASE_TABLE named "__stream_<i>" (engine/relation_names.h): i; else nullopt.
std::optional<size_t> StreamIndexOf(const Json& ref);
// Every stream index of a "__stream_<i>" table ref anywhere below `node` (subqueries included).
void CollectStreams(const Json& node, std::set<size_t>* out);
// True when some table ref below `node` (subqueries included) reads a stream.
bool ReadsStream(const Json& node);
// A BASE_TABLE ref of `name` (in the default catalog and schema) with an alias and the column
// aliases of `(alias(c1, c2))` (an array; empty when none).
Json MakeBaseTableRef(const std::string& name, const std::string& alias,
                      const Json& column_name_alias = Json::array());
const Json& ColumnNameAliases(const Json& ref);  // a table ref's `AS t(c1, ...)`: array or null
const Json& JoinLeft(const Json& join);
const Json& JoinRight(const Json& join);
const Json& JoinCondition(const Json& join);     // null for a CROSS / NATURAL / USING join
const Json& JoinUsingColumns(const Json& join);  // USING (...) names
std::string JoinType(const Json& join);          // "INNER" (default), "LEFT", "SEMI", ...
std::string JoinRefType(const Json& join);       // "REGULAR" (default), "CROSS", "NATURAL", ...
// A SUBQUERY table ref's (or SUBQUERY expression's) query node; null when none.
const Json& SubqueryNode(const Json& ref);

// Expressions.
// FUNCTION / OPERATOR / CONJUNCTION / WINDOW arguments (empty when none).
const Json& Children(const Json& expr);
const Json& CastChild(const Json& cast);             // CAST: the expression cast
std::string CastTypeId(const Json& cast);            // CAST: the target type's id ("INTERVAL", ...)
const Json& ComparisonLeft(const Json& comparison);  // COMPARISON: left operand
const Json& ComparisonRight(const Json& comparison);
const Json& BetweenInput(const Json& between);  // BETWEEN: input BETWEEN lower AND upper
const Json& BetweenLower(const Json& between);
const Json& BetweenUpper(const Json& between);
// FUNCTION (an aggregate call) and WINDOW: DISTINCT, FILTER (WHERE ...) (null: none), an
// ORDER BY inside the call (`string_agg(x ORDER BY y)`).
bool IsDistinctCall(const Json& call);
const Json& AggregateFilter(const Json& call);
bool HasCallOrderBy(const Json& call);
// WINDOW (`f(...) OVER (PARTITION BY ... ORDER BY ...)`).
const Json& WindowPartitions(const Json& window);
const Json& WindowOrders(const Json& window);
const Json& WindowFilter(const Json& window);  // FILTER (WHERE ...): null when none
bool WindowIgnoresNulls(const Json& window);
const Json& WindowArgOrders(const Json& window);  // first_value(x ORDER BY y): empty when none
// STAR (`*`, `t.*`, `* EXCLUDE (...)`, `COLUMNS(...)`).
std::string StarRelation(const Json& star);  // "t" of t.*, "" for *
// True for a plain `*` / `t.*`: no EXCLUDE, REPLACE, RENAME, COLUMNS(...) or expression.
bool IsPlainStar(const Json& star);
const Json& StarExcludeList(const Json& star);  // unqualified EXCLUDE names
// True when the star has anything besides unqualified EXCLUDE names (a qualified EXCLUDE,
// REPLACE, RENAME, COLUMNS(...) or an expression).
bool StarHasMoreThanExclude(const Json& star);
// CONSTANT: the value object; its payload as an integer / a string when it is one and not NULL
// (the string also under CASTs, as DuckDB parses '...'::INTERVAL); whether its type is INTERVAL.
const Json& ConstantValue(const Json& constant);
std::optional<int64_t> IntegerConstant(const Json& expr);
std::optional<std::string> StringConstant(const Json& expr);
// The constant's payload as written: a string as is, a number or other JSON as its text;
// nullopt when `expr` is not a non-null CONSTANT.
std::optional<std::string> ConstantText(const Json& expr);
bool IsIntervalConstant(const Json& expr);

}  // namespace sluice::plan
