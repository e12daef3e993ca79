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
// Thread safety: a translator is used by one thread; it keeps only a counter of derived names.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace spark::connect {
class Relation;
class Expression;
class DataType;
}  // namespace spark::connect

namespace sluice::connect {

class PlanTranslator {
 public:
  // The relation as one query (no trailing ';').
  Result<std::string> Query(const spark::connect::Relation& relation);
  // An expression as Spark SQL text.
  Result<std::string> Expr(const spark::connect::Expression& expression);

 private:
  struct Sub;
  Result<Sub> Translate(const spark::connect::Relation& relation);
  // `sub` as a FROM item: "(query) AS name".
  std::string From(const Sub& sub);
  Result<std::string> Function(const std::string& name, const std::string& args_joined,
                               const std::vector<std::string>& args, bool distinct);

  int next_alias_ = 0;
};

// Spark SQL text of a literal expression.
Result<std::string> LiteralToSql(const spark::connect::Expression& literal);
// A Spark identifier (possibly multi-part, possibly backquoted) with every part that is not a
// plain identifier backquoted: "a" -> a, "t.a" -> t.a, "count(1)" -> `count(1)`.
std::string QuoteIdentifier(const std::string& unparsed);
// One name as an identifier: backquoted unless plain.
std::string QuoteName(const std::string& name);

}  // namespace sluice::connect
