#include "dialect/spark_sql.h"

#include <vector>

#include "dialect/from_json.h"
#include "dialect/rules.h"

namespace sluice::dialect {
namespace {

// True when the word at `k` is a parameter of a lambda: `x ->` or in `(x, y) ->`.
bool IsLambdaParameter(const std::vector<Token>& tokens, size_t k) {
  if (tokens[k + 1].IsSymbol("->")) return true;
  if (k == 0 || !(tokens[k - 1].IsSymbol("(") || tokens[k - 1].IsSymbol(","))) return false;
  size_t j = k;
  while (IsName(tokens[j]) && tokens[j + 1].IsSymbol(",")) j += 2;
  return IsName(tokens[j]) && tokens[j + 1].IsSymbol(")") && tokens[j + 2].IsSymbol("->");
}

// Every rule's edits of `sql`; InvalidArgument from a rule that refuses. `statement`: `sql` is
// a whole statement (the batch window rule reads its GROUP BY), not an expression or a fragment.
Result<std::string> ApplyRules(std::string_view sql, const std::vector<Substitution>* subs,
                               bool statement) {
  auto tokens = Tokenize(sql, Lexing::kSpark);
  if (!tokens.ok()) return std::string(sql);  // the engine reports the error
  std::vector<Edit> edits;
  RewriteArithmetic(sql, *tokens, &edits);
  if (statement) RewriteBatchWindows(sql, *tokens, &edits);
  SLUICE_RETURN_NOT_OK(RewriteLiterals(sql, *tokens, &edits));
  RewriteCasts(sql, *tokens, &edits);
  RewriteNames(sql, *tokens, &edits);
  SLUICE_RETURN_NOT_OK(RewriteFunctions(sql, *tokens, &edits, subs));
  RewriteClauses(sql, *tokens, &edits);
  RewriteDatetime(sql, *tokens, &edits);
  RewriteJsonPaths(sql, *tokens, &edits);
  if (subs != nullptr && !subs->empty()) {
    const std::vector<Token>& t = *tokens;
    for (size_t k = 0; t[k].kind != TokenKind::kEnd; ++k) {
      if (!IsName(t[k]) || (k > 0 && t[k - 1].IsSymbol(".")) || t[k + 1].IsSymbol("(") ||
          IsLambdaParameter(t, k)) {
        continue;
      }
      for (const Substitution& s : *subs) {
        const bool same =
            t[k].kind == TokenKind::kWord ? t[k].IsKeyword(s.name) : t[k].text == s.name;
        if (same) {
          edits.push_back({t[k].begin, t[k].end, s.text});
          break;
        }
      }
    }
  }
  if (edits.empty()) return std::string(sql);
  return ApplyEdits(sql, std::move(edits));
}

}  // namespace

Result<std::string> RewriteFragment(std::string_view text,
                                    const std::vector<Substitution>& substitutions) {
  return ApplyRules(text, &substitutions, false);
}

Result<std::string> RewriteSparkSql(engine::Connection* conn, std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(std::string text, ApplyRules(sql, nullptr, true));
  return RewriteFromJson(conn, text);
}

std::string QuoteSparkName(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out += '`';
    out += c;
  }
  return out + "`";
}

Result<std::string> RewriteSparkExpression(engine::Connection* conn, std::string_view expr) {
  constexpr std::string_view kPrefix = "SELECT ";
  SLUICE_ASSIGN_OR_RETURN(std::string text,
                          ApplyRules(std::string(kPrefix) + std::string(expr), nullptr, false));
  SLUICE_ASSIGN_OR_RETURN(std::string sql, RewriteFromJson(conn, text));
  if (sql.compare(0, kPrefix.size(), kPrefix) != 0) {
    return Status::Internal("the Spark dialect rewrote the SELECT before an expression");
  }
  return sql.substr(kPrefix.size());
}

}  // namespace sluice::dialect
