#include "dialect/spark_sql.h"

#include <vector>

#include "dialect/from_json.h"
#include "dialect/rules.h"

namespace sluice::dialect {

Result<std::string> RewriteSparkSql(engine::Connection* conn, std::string_view sql) {
  std::string text(sql);
  auto tokens = Tokenize(sql, Lexing::kSpark);
  if (tokens.ok()) {  // else the engine reports the error
    std::vector<Edit> edits;
    RewriteLiterals(sql, *tokens, &edits);
    RewriteCasts(sql, *tokens, &edits);
    RewriteNames(sql, *tokens, &edits);
    SLUICE_RETURN_NOT_OK(RewriteFunctions(sql, *tokens, &edits));
    RewriteClauses(sql, *tokens, &edits);
    RewriteDatetime(sql, *tokens, &edits);
    RewriteJsonPaths(sql, *tokens, &edits);
    if (!edits.empty()) text = ApplyEdits(sql, std::move(edits));
  }
  return RewriteFromJson(conn, text);
}

Result<std::string> RewriteSparkExpression(engine::Connection* conn, std::string_view expr) {
  constexpr std::string_view kPrefix = "SELECT ";
  SLUICE_ASSIGN_OR_RETURN(std::string sql,
                          RewriteSparkSql(conn, std::string(kPrefix) + std::string(expr)));
  if (sql.compare(0, kPrefix.size(), kPrefix) != 0) {
    return Status::Internal("the Spark dialect rewrote the SELECT before an expression");
  }
  return sql.substr(kPrefix.size());
}

}  // namespace sluice::dialect
