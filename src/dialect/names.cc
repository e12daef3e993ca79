// Spark's identifiers in the engine's words (rules.h):
//
//   Spark                              rewritten to       why
//   `order`, `a-b`, `x.y`, `my col`    "order", "a-b",    DuckDB has no backquoted names; a
//   `a``b`                             "x.y", "my col",   backquoted name is a quoted one
//                                      "a`b"              (`` is a backquote)
//   delta.`/path`, parquet.`/p`, ...   (kept)             the path forms of a table and the
//   `kafka.client.id` => 'x'                              options of read_kafka (sql/ reads
//                                                         them after this rule)
//   offset, window as a column name    "offset", "window" reserved words in DuckDB's parser
//   (partition, timestamp, value, key, user, end are not reserved in DuckDB or are quoted by
//   the user: nothing to do)
//
//   offset / window are quoted where a column name stands: after SELECT, DISTINCT, a comma, an
//   opening parenthesis, BY, WHERE, HAVING, QUALIFY, ON, AND, OR, NOT, CASE, WHEN, THEN, ELSE, IN,
//   IS, LIKE, BETWEEN, AS or an operator, and not before '(' (window(ts, ...) is the function);
//   after a closing parenthesis as a subquery's alias, (SELECT 1 AS x) offset, unless a number
//   or '(' follows (LIMIT (n) OFFSET 2) or, for window, `name AS` (WINDOW w AS (...)). The
//   clauses LIMIT n OFFSET m and WINDOW w AS (...) follow an expression or a table and stay
//   keywords. Elsewhere (e.g. SELECT a offset FROM t) write "offset" or `offset`.
#include "common/strings.h"
#include "dialect/rules.h"

namespace sluice::dialect {
namespace {

bool IsReservedColumnWord(const Token& t) {
  return t.kind == TokenKind::kWord && (t.IsKeyword("offset") || t.IsKeyword("window"));
}

// The table formats whose `path` names a table by its location (format.`path`).
constexpr const char* kPathFormats[] = {"delta", "parquet", "json", "csv",
                                        "orc",   "text",    "avro", "binaryfile"};

// True when the backquoted token at `i` is the path of format.`path`.
bool IsPathOfFormat(const std::vector<Token>& tokens, size_t i) {
  if (i < 2 || !tokens[i - 1].IsSymbol(".")) return false;
  for (const char* f : kPathFormats) {
    if (tokens[i - 2].IsKeyword(f) && !(i >= 3 && tokens[i - 3].IsSymbol("."))) return true;
  }
  return false;
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

// True when offset / window at `i`, right after ')', is a subquery's alias, not the clause.
bool AliasAfterParenthesis(const std::vector<Token>& tokens, size_t i) {
  const Token& next = tokens[i + 1];
  if (next.kind == TokenKind::kNumber || next.IsSymbol("(")) return false;
  if (tokens[i].IsKeyword("window") && IsName(next) && tokens[i + 2].IsKeyword("as")) return false;
  return true;
}

}  // namespace

void RewriteNames(std::string_view sql, const std::vector<Token>& tokens,
                  std::vector<Edit>* edits) {
  (void)sql;
  for (size_t i = 0; tokens[i].kind != TokenKind::kEnd; ++i) {
    const Token& t = tokens[i];
    if (t.kind == TokenKind::kBacktick) {
      // `kafka.isolation.level` => 'x': an option of Sluice's table functions (sql/ reads it).
      if (!IsPathOfFormat(tokens, i) && !tokens[i + 1].IsSymbol("=>")) {
        edits->push_back({t.begin, t.end, QuoteIdentifier(t.text)});
      }
      continue;
    }
    if (i == 0 || !IsReservedColumnWord(t) || tokens[i - 1].IsSymbol(".") ||
        tokens[i + 1].IsSymbol("(")) {
      continue;
    }
    if (ColumnNameFollows(tokens[i - 1]) ||
        (tokens[i - 1].IsSymbol(")") && AliasAfterParenthesis(tokens, i))) {
      edits->push_back({t.begin, t.end, QuoteIdentifier(t.text)});
    }
  }
}

}  // namespace sluice::dialect
