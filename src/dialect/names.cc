// Words Spark SQL lets name a column (non-reserved there) that DuckDB's parser reserves (rules.h):
//
//   Spark                              rewritten to       why
//   offset, window as a column name    "offset", "window" reserved words in DuckDB's parser
//   (partition, timestamp, value and key are not reserved in DuckDB: nothing to do)
//
//   offset / window are quoted where a column name stands: after SELECT, DISTINCT, a comma, an
//   opening parenthesis, BY, WHERE, HAVING, QUALIFY, ON, AND, OR, NOT, CASE, WHEN, THEN, ELSE, IN,
//   IS, LIKE, BETWEEN, AS or an operator, and not before '(' (window(ts, ...) is the function). The
//   clauses LIMIT n OFFSET m and WINDOW w AS (...) follow an expression or a table and stay
//   keywords. Elsewhere (e.g. SELECT a offset FROM t) write "offset" or `offset`.
#include "common/strings.h"
#include "dialect/rules.h"

namespace sluice::dialect {
namespace {

bool IsReservedColumnWord(const Token& t) {
  return t.kind == TokenKind::kWord && (t.IsKeyword("offset") || t.IsKeyword("window"));
}

// True when a column name (or an alias), not a clause keyword, stands after `prev`.
bool ColumnNameFollows(const Token& prev) {
  if (prev.kind == TokenKind::kSymbol) {
    static const char* const kSymbols[] = {
        ",", "(", "[", "=", "<",  ">", "<=", ">=", "<>", "!=", "==", "+",
        "-", "*", "/", "%", "||", "&", "|",  "^",  "<<", ">>", "->", "->>"};
    for (const char* s : kSymbols) {
      if (prev.text == s) return true;
    }
    return false;
  }
  static const char* const kWords[] = {
      "select", "distinct", "by",   "where",   "and", "or", "not",  "on",      "when", "then",
      "else",   "having",   "case", "qualify", "in",  "is", "like", "between", "as"};
  for (const char* w : kWords) {
    if (prev.IsKeyword(w)) return true;
  }
  return false;
}

}  // namespace

void RewriteNames(std::string_view sql, const std::vector<Token>& tokens,
                  std::vector<Edit>* edits) {
  (void)sql;
  for (size_t i = 1; tokens[i].kind != TokenKind::kEnd; ++i) {
    const Token& t = tokens[i];
    if (IsReservedColumnWord(t) && !tokens[i - 1].IsSymbol(".") &&
        ColumnNameFollows(tokens[i - 1]) && !tokens[i + 1].IsSymbol("(")) {
      edits->push_back({t.begin, t.end, QuoteIdentifier(t.text)});
    }
  }
}

}  // namespace sluice::dialect
