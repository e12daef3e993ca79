#include "dialect/token_edits.h"

#include <algorithm>

namespace sluice::dialect {

std::string ApplyEdits(std::string_view sql, std::vector<Edit> edits) {
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    const bool a_insert = a.begin == a.end, b_insert = b.begin == b.end;
    if (a_insert != b_insert) return a_insert;
    return a_insert && a.span_end > b.span_end;
  });
  std::string out;
  size_t copied = 0;
  for (const Edit& e : edits) {
    if (e.begin < copied) continue;  // inside a range an earlier edit replaced
    out.append(sql.substr(copied, e.begin - copied));
    out.append(e.text);
    copied = std::max(copied, e.end);
  }
  out.append(sql.substr(copied));
  return out;
}

size_t CloseOf(const std::vector<Token>& tokens, size_t open, std::vector<size_t>* commas) {
  int depth = 0;
  for (size_t i = open; i < tokens.size() && tokens[i].kind != TokenKind::kEnd; ++i) {
    if (tokens[i].IsSymbol("(") || tokens[i].IsSymbol("[")) ++depth;
    if (tokens[i].IsSymbol(")") || tokens[i].IsSymbol("]")) {
      if (--depth == 0) return i;
    }
    if (depth == 1 && commas != nullptr && tokens[i].IsSymbol(",")) commas->push_back(i);
  }
  return kNoToken;
}

size_t OpenOf(const std::vector<Token>& tokens, size_t close) {
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (tokens[i].IsSymbol(")") || tokens[i].IsSymbol("]")) ++depth;
    if (tokens[i].IsSymbol("(") || tokens[i].IsSymbol("[")) {
      if (--depth == 0) return i;
    }
  }
  return kNoToken;
}

bool IsClauseWord(const Token& t) {
  static const char* const kWords[] = {
      "select", "where",   "and",     "or",       "not",   "on",     "when",      "then",   "else",
      "by",     "having",  "in",      "as",       "from",  "join",   "exists",    "values", "case",
      "is",     "like",    "between", "distinct", "all",   "any",    "some",      "over",   "using",
      "return", "qualify", "filter",  "within",   "union", "except", "intersect", "with"};
  if (t.kind != TokenKind::kWord) return false;
  for (const char* w : kWords) {
    if (t.IsKeyword(w)) return true;
  }
  return false;
}

bool IsName(const Token& t) {
  return t.kind == TokenKind::kWord || t.kind == TokenKind::kQuotedIdent ||
         t.kind == TokenKind::kBacktick;
}

bool IsCall(const std::vector<Token>& tokens, size_t i, std::string_view name) {
  return tokens[i].IsKeyword(name) && tokens[i + 1].IsSymbol("(") &&
         !(i > 0 && tokens[i - 1].IsSymbol("."));
}

size_t OperandStart(const std::vector<Token>& tokens, size_t before) {
  if (before == 0) return kNoToken;
  size_t j = before - 1;
  const Token& last = tokens[j];
  const bool glued = j > 0 && tokens[j - 1].end == last.begin;
  if (last.kind == TokenKind::kString || last.kind == TokenKind::kNumber) {
    // X'41'::STRING: the prefix X (or E, N, TIMESTAMP) is part of the literal.
    if (glued && tokens[j - 1].kind == TokenKind::kWord) return j - 1;
    return j;
  }
  if (last.kind == TokenKind::kWord && glued && tokens[j - 1].kind == TokenKind::kNumber) {
    return j - 1;  // 5L::STRING: the suffix belongs to the number
  }
  for (;;) {
    while (tokens[j].IsSymbol("]")) {  // x[1]
      size_t open = OpenOf(tokens, j);
      if (open == kNoToken || open == 0) return kNoToken;
      j = open - 1;
    }
    size_t start;
    if (tokens[j].IsSymbol(")")) {
      size_t open = OpenOf(tokens, j);
      if (open == kNoToken) return kNoToken;
      const bool call =
          open > 0 && IsName(tokens[open - 1]) &&
          !(tokens[open - 1].kind == TokenKind::kWord && IsClauseWord(tokens[open - 1]));
      start = call ? open - 1 : open;
    } else if (IsName(tokens[j])) {
      start = j;
    } else {
      return kNoToken;
    }
    if (start < 2 || !tokens[start - 1].IsSymbol(".")) return start;
    j = start - 2;  // the chain goes on before the '.'
  }
}

}  // namespace sluice::dialect
