// Spark's division and remainder (rules.h):
//
//   Spark        rewritten to              why
//   a / b        spark_divide(a, b)        a DOUBLE, or a DECIMAL of Spark's rule for DECIMAL
//                                          operands (DuckDB divides them as DOUBLE); a divisor
//                                          of 0 is DIVIDE_BY_ZERO under ANSI (DuckDB: NULL or
//                                          inf)
//   a % b        spark_remainder(a, b)     REMAINDER_BY_ZERO (DuckDB: NULL); a DECIMAL's type
//
// The engine's functions decide by the operands' types (engine/spark_arithmetic.h). Operands
// follow Spark's precedence: the left one takes the * / % before it (left to right) and prefix
// signs, each operand is a literal, a name chain, a call (with OVER / FILTER / WITHIN GROUP), a
// parenthesized expression, CASE ... END or a typed literal, with its [i], .field and ::type. An
// operator whose operands have another form (or DuckDB's //) is left to the engine.
#include <string>

#include "dialect/rules.h"
#include "dialect/token_edits.h"

namespace sluice::dialect {
namespace {

bool IsMultiplicative(const Token& t) {
  return t.IsSymbol("*") || t.IsSymbol("/") || t.IsSymbol("%");
}

bool IsSign(const Token& t) { return t.IsSymbol("-") || t.IsSymbol("+") || t.IsSymbol("~"); }

// True when `t` ends an operand, so that a sign after it is a binary operator.
bool EndsOperand(const Token& t) {
  if (t.kind == TokenKind::kNumber || t.kind == TokenKind::kString || t.IsSymbol(")") ||
      t.IsSymbol("]")) {
    return true;
  }
  return IsName(t) && !(t.kind == TokenKind::kWord && IsClauseWord(t) && !t.IsKeyword("end"));
}

// The words that begin a typed literal (DATE '2024-01-01').
bool IsLiteralPrefix(const Token& t) {
  return t.IsKeyword("date") || t.IsKeyword("timestamp") || t.IsKeyword("timestamp_ntz") ||
         t.IsKeyword("time");
}

// The CASE matching the END at `end`, or kNoToken.
size_t CaseOf(const std::vector<Token>& tokens, size_t end) {
  int depth = 0;
  for (size_t k = end + 1; k-- > 0;) {
    const Token& t = tokens[k];
    if (t.IsSymbol(")") || t.IsSymbol("]")) {
      size_t open = OpenOf(tokens, k);
      if (open == kNoToken) return kNoToken;
      k = open;
      continue;
    }
    if (k > 0 && tokens[k - 1].IsSymbol(".")) continue;
    if (t.IsKeyword("end")) ++depth;
    if (t.IsKeyword("case") && --depth == 0) return k;
  }
  return kNoToken;
}

// The END matching the CASE at `c`, or kNoToken.
size_t EndOf(const std::vector<Token>& tokens, size_t c) {
  int depth = 0;
  for (size_t k = c; tokens[k].kind != TokenKind::kEnd; ++k) {
    const Token& t = tokens[k];
    if (t.IsSymbol("(") || t.IsSymbol("[")) {
      size_t close = CloseOf(tokens, k, nullptr);
      if (close == kNoToken) return kNoToken;
      k = close;
      continue;
    }
    if (k > 0 && tokens[k - 1].IsSymbol(".")) continue;
    if (t.IsKeyword("case")) ++depth;
    if (t.IsKeyword("end") && --depth == 0) return k;
  }
  return kNoToken;
}

// The first token of the primary (with its postfixes) that ends right before `before`.
size_t PrimaryStart(const std::vector<Token>& tokens, size_t before) {
  if (before == 0) return kNoToken;
  const Token& last = tokens[before - 1];
  size_t start;
  if (last.IsKeyword("end") && !(before >= 2 && tokens[before - 2].IsSymbol("."))) {
    start = CaseOf(tokens, before - 1);
  } else {
    if (last.kind == TokenKind::kWord && IsClauseWord(last)) return kNoToken;
    start = OperandStart(tokens, before);
  }
  if (start == kNoToken) return kNoToken;
  for (;;) {
    if (start == 0) return start;
    const Token& p = tokens[start - 1];
    if (p.IsSymbol("::")) {  // x::INT, x::DECIMAL(10, 2): the operand of the cast
      start = PrimaryStart(tokens, start - 1);
      if (start == kNoToken) return kNoToken;
    } else if (tokens[start].IsSymbol("(") && p.IsKeyword("over")) {  // f(x) OVER (...)
      start = PrimaryStart(tokens, start - 1);
      if (start == kNoToken) return kNoToken;
    } else if (tokens[start].IsSymbol("(") && (p.IsKeyword("filter") || p.IsKeyword("group"))) {
      // f(x) FILTER (WHERE ...), f(x) WITHIN GROUP (ORDER BY ...)
      size_t call = p.IsKeyword("group") && start >= 2 && tokens[start - 2].IsKeyword("within")
                        ? start - 2
                        : start - 1;
      if (!p.IsKeyword("filter") && call == start - 1) return kNoToken;
      start = PrimaryStart(tokens, call);
      if (start == kNoToken) return kNoToken;
    } else if (p.IsKeyword("over") && IsName(tokens[start])) {  // f(x) OVER w
      start = PrimaryStart(tokens, start - 1);
      if (start == kNoToken) return kNoToken;
    } else if (tokens[start].kind == TokenKind::kString && IsLiteralPrefix(p)) {
      return start - 1;
    } else {
      return start;
    }
  }
}

// The first token of the left operand of the operator at `op`, or kNoToken.
size_t LeftStart(const std::vector<Token>& tokens, size_t op) {
  size_t end = op;
  for (;;) {
    size_t start = PrimaryStart(tokens, end);
    if (start == kNoToken) return kNoToken;
    while (start > 0 && IsSign(tokens[start - 1]) &&
           !(start >= 2 && EndsOperand(tokens[start - 2]))) {
      --start;
    }
    if (start == 0 || !IsMultiplicative(tokens[start - 1])) return start;
    if (tokens[start - 1].IsSymbol("/") && start >= 2 && tokens[start - 2].IsSymbol("/")) {
      return kNoToken;  // DuckDB's //
    }
    end = start - 1;
  }
}

// One past the type after `::` at `from`: a word, its (...) parameters, [] suffixes.
size_t TypeEnd(const std::vector<Token>& tokens, size_t from) {
  if (tokens[from].kind != TokenKind::kWord) return kNoToken;
  size_t k = from + 1;
  if (tokens[k].IsSymbol("<")) return kNoToken;  // ARRAY<INT>: left to the engine
  if (tokens[k].IsSymbol("(")) {
    size_t close = CloseOf(tokens, k, nullptr);
    if (close == kNoToken) return kNoToken;
    k = close + 1;
  }
  while (tokens[k].IsSymbol("[") && tokens[k + 1].IsSymbol("]")) k += 2;
  return k;
}

// One past the last token of the right operand starting at `from`, or kNoToken.
size_t RightEnd(const std::vector<Token>& tokens, size_t from) {
  size_t k = from;
  while (IsSign(tokens[k])) ++k;
  const Token& t = tokens[k];
  if (t.IsSymbol("(")) {
    size_t close = CloseOf(tokens, k, nullptr);
    if (close == kNoToken) return kNoToken;
    k = close + 1;
  } else if (t.kind == TokenKind::kNumber) {
    ++k;
    if (tokens[k].kind == TokenKind::kWord && tokens[k].begin == t.end) ++k;  // 5L, 1.5BD
  } else if (t.kind == TokenKind::kString) {
    ++k;
  } else if (t.IsKeyword("case")) {
    size_t end = EndOf(tokens, k);
    if (end == kNoToken) return kNoToken;
    k = end + 1;
  } else if (IsLiteralPrefix(t) && tokens[k + 1].kind == TokenKind::kString) {
    k += 2;
  } else if (t.IsKeyword("x") && tokens[k + 1].kind == TokenKind::kString &&
             tokens[k + 1].begin == t.end) {
    k += 2;
  } else if (IsName(t) && !(t.kind == TokenKind::kWord &&
                            (IsClauseWord(t) || t.IsKeyword("interval") || t.IsKeyword("end")))) {
    ++k;
    if (tokens[k].IsSymbol("(")) {
      size_t close = CloseOf(tokens, k, nullptr);
      if (close == kNoToken) return kNoToken;
      k = close + 1;
      if (tokens[k].IsKeyword("within") && tokens[k + 1].IsKeyword("group") &&
          tokens[k + 2].IsSymbol("(")) {
        k = CloseOf(tokens, k + 2, nullptr);
        if (k == kNoToken) return kNoToken;
        ++k;
      }
      if (tokens[k].IsKeyword("filter") && tokens[k + 1].IsSymbol("(")) {
        k = CloseOf(tokens, k + 1, nullptr);
        if (k == kNoToken) return kNoToken;
        ++k;
      }
      if (tokens[k].IsKeyword("over")) {
        if (tokens[k + 1].IsSymbol("(")) {
          k = CloseOf(tokens, k + 1, nullptr);
          if (k == kNoToken) return kNoToken;
          ++k;
        } else if (IsName(tokens[k + 1])) {
          k += 2;
        } else {
          return kNoToken;
        }
      }
    }
  } else {
    return kNoToken;
  }
  for (;;) {  // postfixes
    if (tokens[k].IsSymbol(".") && IsName(tokens[k + 1])) {
      k += 2;
    } else if (tokens[k].IsSymbol("[")) {
      size_t close = CloseOf(tokens, k, nullptr);
      if (close == kNoToken) return kNoToken;
      k = close + 1;
    } else if (tokens[k].IsSymbol("::")) {
      k = TypeEnd(tokens, k + 1);
      if (k == kNoToken) return kNoToken;
    } else if (tokens[k].IsSymbol(":") || tokens[k].IsSymbol("(")) {
      return kNoToken;  // a JSON path, a call of something else: left to the engine
    } else {
      return k;
    }
  }
}

}  // namespace

void RewriteArithmetic(std::string_view sql, const std::vector<Token>& tokens,
                       std::vector<Edit>* edits) {
  (void)sql;
  for (size_t i = 1; tokens[i].kind != TokenKind::kEnd; ++i) {
    const Token& t = tokens[i];
    const bool divide = t.IsSymbol("/");
    if (!divide && !t.IsSymbol("%")) continue;
    if (divide && (tokens[i + 1].IsSymbol("/") || tokens[i - 1].IsSymbol("/"))) continue;  // //
    size_t left = LeftStart(tokens, i);
    size_t right = RightEnd(tokens, i + 1);
    if (left == kNoToken || right == kNoToken || right == i + 1) continue;
    if (left > 0 &&
        (tokens[left - 1].IsKeyword("sample") || tokens[left - 1].IsKeyword("tablesample"))) {
      continue;  // DuckDB's USING SAMPLE 10%
    }
    const size_t close = tokens[right - 1].end;
    Edit open{tokens[left].begin, tokens[left].begin,
              divide ? "spark_divide(" : "spark_remainder("};
    open.span_end = close;
    edits->push_back(std::move(open));
    edits->push_back({t.begin, t.end, ","});
    edits->push_back({close, close, ")"});
  }
}

}  // namespace sluice::dialect
