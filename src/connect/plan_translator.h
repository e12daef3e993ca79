// PlanTranslator: a Spark Connect plan (spark.connect.Relation and Expression) as one Spark SQL
// query, which sql::Session runs through the Spark dialect (docs/sql-frontend.md). The
// DataFrame API's operations become the SQL clauses Spark itself defines them by: Project is a
// SELECT list, Filter a WHERE, Sort an ORDER BY, Limit a LIMIT, Range the range() relation
// with Spark's column `id`, and so on (docs/pyspark.md has the table).
//
// Each relation becomes a query over its input as a derived table, named by the input's
// SubqueryAlias when it has one (so `df.alias("t").select("t.a")` resolves), else by a fresh
// name. Identifiers are Spark's (backquotes where a part is not a plain identifier); function
// calls keep Spark's names, which the dialect maps; the Column operators PySpark sends as
// functions ("==", "and", "isNull", "when", ...) become SQL operators.
//
// Whatever is not translated yet is refused with NotSupported naming the relation, expression
// or function (the server sends it with Spark's error class: connect/rpc_errors.h), never
// translated approximately.
//
// The context (TranslationContext) gives what some relations need beyond the plan: the
// session's temporary views (a view is the query it was created from, captured then; Read of a
// view's name and SQL text naming it read that query, SQL text as a CTE of the view's name, which
// shadows a table of that name as Spark's temporary views do) and the schema of a query
// (withColumn(s), withColumnRenamed and joins on column names list the input's columns).
//
// Joins: a join on a condition is `(left) AS l JOIN (right) AS r ON cond`, the sides named by
// their SubqueryAlias or a fresh name; a column of one side (`df1.id`, an attribute carrying
// the plan id of df1 or of a relation under it that keeps its columns) is qualified by that
// side's name in the condition and in the Project, Filter, Sort or Aggregate right above the
// join, which read the join's FROM item itself (so that both sides' `id` stay apart, as in
// Spark). A join on column names lists Spark's columns: the keys first (the left side's, the
// right side's for a right join, COALESCE of both for a full join), then the other columns of
// the left side, then those of the right side (none for semi and anti joins).
//
// Thread safety: a translator is used by one thread; it keeps only a counter of derived names.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "dialect/tokenizer.h"
#include "engine/types.h"

namespace spark::connect {
class Relation;
class Expression;
class DataType;  // NOLINT(bugprone-forward-declaration-namespace): Spark Connect's, not engine's
}  // namespace spark::connect

namespace sluice::connect {

// A temporary view of a session: its name as created and the query it stands for.
struct TempView {
  std::string name;
  std::string sql;
};
// By the view's name in lower case (Spark's names are case-insensitive).
using TempViews = std::map<std::string, TempView>;

struct TranslationContext {
  const TempViews* temp_views = nullptr;  // none when null
  // The columns of a query; relations that need them are refused when it is not set.
  std::function<Result<engine::Schema>(const std::string& sql)> schema_of;
  // The SQL of a cached relation (CachedRemoteRelation: a foreachBatch micro-batch) by its id;
  // nullopt for an unknown id. Cached relations are refused when it is not set.
  std::function<std::optional<std::string>(const std::string& id)> cached_relation;
};

class PlanTranslator {
 public:
  explicit PlanTranslator(TranslationContext context = {}) : ctx_(std::move(context)) {}

  // The relation as one query (no trailing ';').
  Result<std::string> Query(const spark::connect::Relation& relation);
  // An expression as Spark SQL text.
  Result<std::string> Expr(const spark::connect::Expression& expression);
  // SQL text with the temporary views it names given as CTEs; the text itself when it names
  // none. In a statement other than a query (MERGE, INSERT ... SELECT, ...), a view named as a
  // table to read (right after FROM, JOIN or USING) becomes its query as a derived table of the
  // view's name; a view named anywhere else as a table (INTO, UPDATE, TABLE, MERGE INTO ...) is
  // refused (NotSupported: a temporary view is not written).
  Result<std::string> WithTempViews(const std::string& text);
  // An expression whose columns carrying one of `qualifiers`' plan ids (df.col of a side of a
  // join) are qualified by that name: "l.id". For a join's condition built outside Query.
  Result<std::string> QualifiedExpr(const spark::connect::Expression& expression,
                                    const std::map<int64_t, std::string>& qualifiers);
  // The plan ids whose columns `relation`'s output keeps: its own and, through the relations
  // that keep their input's columns (filter, project, alias, ...), its inputs'.
  static std::vector<int64_t> PlanIds(const spark::connect::Relation& relation);

 private:
  struct Sub;
  Result<Sub> Translate(const spark::connect::Relation& relation);
  Result<Sub> TranslateRelation(const spark::connect::Relation& relation);
  Result<Sub> TranslateJoin(const spark::connect::Relation& relation);
  Result<engine::Schema> SchemaOf(const Sub& sub, const char* what);
  // WithTempViews of a statement other than a query (the views in its FROM/JOIN/USING).
  Result<std::string> ViewsInStatement(const std::string& text,
                                       const std::vector<dialect::Token>& tokens);
  // `sub` as a FROM item: "(query) AS name", or a join's FROM item.
  std::string From(const Sub& sub);
  Result<std::string> Function(const std::string& name, const std::string& args_joined,
                               const std::vector<std::string>& args, bool distinct);

  TranslationContext ctx_;
  // While the expressions of a relation over a join are translated: the qualifier of each plan
  // id whose columns one side of the join has.
  const std::map<int64_t, std::string>* qualifiers_ = nullptr;
  int next_alias_ = 0;
};

// True when the statement's first word is one a query starts with (SELECT, WITH, VALUES, FROM,
// TABLE), after blanks, comments and opening parentheses.
bool IsQueryText(std::string_view text);
// True when the statement's first word is MERGE, UPDATE, DELETE or INSERT (the DML Delta's
// txnAppId/txnVersion confs apply to).
bool IsDmlText(std::string_view text);

// Spark SQL text of a literal expression.
Result<std::string> LiteralToSql(const spark::connect::Expression& literal);
// A Spark identifier (possibly multi-part, possibly backquoted) with every part that is not a
// plain identifier backquoted: "a" -> a, "t.a" -> t.a, "count(1)" -> `count(1)`.
std::string QuoteIdentifier(const std::string& unparsed);
// One name as an identifier: backquoted unless plain.
std::string QuoteName(const std::string& name);

}  // namespace sluice::connect
