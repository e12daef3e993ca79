// Spark's clause spellings (rules.h):
//
//   Spark                              rewritten to             why
//   LEFT SEMI JOIN, LEFT ANTI JOIN     SEMI JOIN, ANTI JOIN     DuckDB's spelling
//   SORT BY a                          ORDER BY a               one partition: its sort is the
//   order CLUSTER BY a                       ORDER BY a               DISTRIBUTE BY a SORT BY a
//   DISTRIBUTE BY a, b                 (nothing)                no partitions to distribute to
//   q1 MINUS q2                        q1 EXCEPT q2             MINUS is EXCEPT DISTINCT
//   SELECT * EXCEPT (a, b)             SELECT * EXCLUDE (a, b)  DuckDB's spelling
//   a div b                            a // b                   integral division, toward zero
//   a RLIKE p, a REGEXP p              regexp_matches(a, p)     a match anywhere, as Java's find()
//   a NOT RLIKE p                      NOT regexp_matches(a, p)
//   FROM t LATERAL VIEW explode(xs) v AS x
//                                      FROM t CROSS JOIN LATERAL (SELECT unnest(xs) AS x) AS v
//   LATERAL VIEW OUTER explode(xs) v AS x
//                                      LEFT JOIN LATERAL (SELECT unnest(xs) AS x) AS v ON TRUE
//                                      (a row for an empty or NULL array, as explode_outer)
//   ORDER BY a, b DESC                 ORDER BY a NULLS FIRST,  Spark sorts NULLs first when
//   (also in OVER (...), WITHIN          b DESC                 ascending, last when descending;
//   GROUP, f(x ORDER BY y))                                     DuckDB last in both. An item that
//                                                               says NULLS FIRST/LAST is kept
//   a <=> b                            a IS NOT DISTINCT FROM b null-safe equality
//   count(DISTINCT a, b)               count(DISTINCT           the tuples without a NULL, as
//                                        spark_tuple(a, b))     Spark counts them (a row (a, b)
//                                                               with a NULL is not NULL)
//   percentile_disc(p) WITHIN GROUP    CAST(percentile_disc(p)  a DOUBLE in Spark, the column's
//     (ORDER BY v)                       WITHIN GROUP (...) AS  type in DuckDB
//                                        DOUBLE)
//   FROM range(n), JOIN range(a, b[,   FROM (SELECT range AS id Spark's range() names its column
//     step[, numPartitions]])            FROM range(a, b[, step])) `id`, DuckDB's `range`; the
//                                                               partition count changes nothing
//                                                               (left when the statement names
//                                                               the engine's column `range`)
//   a ^ b                              xor(a, b)                ^ is XOR in Spark, a power in
//                                                               DuckDB; Spark's precedence: the
//                                                               operands take * / % + - & (not |,
//                                                               comparisons, AND, OR)
#include <string>

#include "common/strings.h"
#include "dialect/rules.h"

namespace sluice::dialect {
namespace {

// True when an operand ends with `t` (a literal, a name, a closing bracket).
bool EndsOperand(const Token& t) {
  return t.kind == TokenKind::kNumber || t.kind == TokenKind::kString || IsName(t) ||
         t.IsSymbol(")") || t.IsSymbol("]");
}

// The end (exclusive token index) of a DISTRIBUTE BY list starting at `from`: names and dotted
// names joined by commas.
size_t ListEnd(const std::vector<Token>& tokens, size_t from) {
  size_t k = from;
  for (;;) {
    if (!IsName(tokens[k])) return k;
    ++k;
    while (tokens[k].IsSymbol(".") && IsName(tokens[k + 1])) k += 2;
    if (!tokens[k].IsSymbol(",")) return k;
    ++k;
  }
}

// The end (exclusive token index) of RLIKE's right operand at `from`: a literal, or a name
// chain with an optional call; kNoToken for another form.
size_t RightOperandEnd(const std::vector<Token>& tokens, size_t from) {
  const Token& t = tokens[from];
  if (t.kind == TokenKind::kString || t.kind == TokenKind::kNumber) return from + 1;
  if (!IsName(t)) return kNoToken;
  size_t k = from + 1;
  while (tokens[k].IsSymbol(".") && IsName(tokens[k + 1])) k += 2;
  if (tokens[k].IsSymbol("(")) {
    size_t close = CloseOf(tokens, k, nullptr);
    return close == kNoToken ? kNoToken : close + 1;
  }
  return k;
}

// LATERAL VIEW [OUTER] explode(args) alias [AS] column at `i` (the LATERAL): the edits, or none
// for another shape (left to the engine, which refuses LATERAL VIEW).
void LateralView(const std::vector<Token>& tokens, size_t i, std::vector<Edit>* edits) {
  size_t k = i + 2;
  const bool outer = tokens[k].IsKeyword("outer");
  if (outer) ++k;
  if (!(tokens[k].IsKeyword("explode") || tokens[k].IsKeyword("explode_outer")) ||
      !tokens[k + 1].IsSymbol("(")) {
    return;
  }
  const bool keep_empty = outer || tokens[k].IsKeyword("explode_outer");
  size_t close = CloseOf(tokens, k + 1, nullptr);
  if (close == kNoToken || !IsName(tokens[close + 1]) || tokens[close + 1].IsKeyword("as")) return;
  const Token& alias = tokens[close + 1];
  size_t c = close + 2;
  if (tokens[c].IsKeyword("as")) ++c;
  if (!IsName(tokens[c]) || tokens[c + 1].IsSymbol(",")) return;
  const Token& column = tokens[c];
  edits->push_back({tokens[i].begin, tokens[k + 1].end,
                    std::string(keep_empty ? "LEFT" : "CROSS") + " JOIN LATERAL (SELECT unnest("});
  edits->push_back({tokens[close].begin, column.end,
                    ") AS " + QuoteIdentifier(column.text) + ") AS " + QuoteIdentifier(alias.text) +
                        (keep_empty ? " ON TRUE" : "")});
}

// True when the statement names the engine's column `range` (a `range` that is no call and no
// window frame's RANGE): a query written for the engine's range(), which Spark would refuse
// (no such column); left as written, so that it keeps its meaning.
bool NamesRangeColumn(const std::vector<Token>& tokens) {
  for (size_t i = 0; tokens[i].kind != TokenKind::kEnd; ++i) {
    if (!tokens[i].IsKeyword("range")) continue;
    const Token& next = tokens[i + 1];
    if (next.IsSymbol("(") || next.IsKeyword("between") || next.IsKeyword("unbounded") ||
        next.IsKeyword("current") || next.IsKeyword("interval") ||
        next.kind == TokenKind::kNumber) {
      continue;
    }
    return true;
  }
  return false;
}

// range(...) at `i` as a relation (after FROM or JOIN): a subquery naming its column `id`, as
// Spark's range() does; a fourth argument (numPartitions) is dropped. Other forms are left.
void RangeRelation(const std::vector<Token>& tokens, size_t i, std::vector<Edit>* edits) {
  std::vector<size_t> commas;
  size_t close = CloseOf(tokens, i + 1, &commas);
  if (close == kNoToken || close == i + 2 || commas.size() > 3) return;
  edits->push_back({tokens[i].begin, tokens[i].begin, "(SELECT range AS id FROM "});
  if (commas.size() == 3) edits->push_back({tokens[commas[2]].begin, tokens[close].begin, ""});
  edits->push_back({tokens[close].end, tokens[close].end, ")"});
}

// True for a word that ends an ORDER BY list at its top level.
bool EndsOrderByList(const Token& t) {
  static const char* const kWords[] = {"limit",  "offset",  "rows",       "range", "groups",
                                       "union",  "except",  "intersect",  "minus", "fetch",
                                       "window", "qualify", "having",     "for",   "from",
                                       "where",  "group",   "distribute", "sort",  "cluster"};
  for (const char* w : kWords) {
    if (t.IsKeyword(w)) return true;
  }
  return false;
}

// ORDER BY at `by` (the BY): " NULLS FIRST" after each item that is ascending and says nothing
// about NULLs.
void NullsFirst(const std::vector<Token>& tokens, size_t by, std::vector<Edit>* edits) {
  size_t item = by + 1;
  bool says_nulls = false;
  int depth = 0;
  for (size_t k = by + 1;; ++k) {
    const Token& t = tokens[k];
    bool end_item = false, end_list = false;
    if (t.IsSymbol("(") || t.IsSymbol("[")) {
      ++depth;
    } else if (t.IsSymbol(")") || t.IsSymbol("]")) {
      if (depth == 0) end_list = true;
      --depth;
    } else if (t.kind == TokenKind::kEnd || t.IsSymbol(";")) {
      end_list = true;
    } else if (depth == 0) {
      if (t.IsSymbol(",")) {
        end_item = true;
      } else if (EndsOrderByList(t)) {
        end_list = true;
      } else if (t.IsKeyword("nulls")) {
        says_nulls = true;
      }
    }
    if (!end_item && !end_list) continue;
    if (k > item && !says_nulls && !tokens[k - 1].IsKeyword("desc")) {
      edits->push_back({tokens[k - 1].end, tokens[k - 1].end, " NULLS FIRST"});
    }
    if (end_list) return;
    item = k + 1;
    says_nulls = false;
  }
}

// True for a token that ends an operand of Spark's ^ (an operator of lower precedence, a
// separator or a clause word).
bool StopsXorOperand(const Token& t) {
  if (t.kind == TokenKind::kEnd) return true;
  if (t.kind == TokenKind::kSymbol) {
    static const char* const kSymbols[] = {
        ",", "|", "^", "=", "<", ">", "<=", ">=", "<>", "!=", "==", ";", "=>", "->", ":="};
    for (const char* s : kSymbols) {
      if (t.text == s) return true;
    }
    return false;
  }
  static const char* const kWords[] = {"end", "asc", "desc", "limit", "offset", "order", "group"};
  for (const char* w : kWords) {
    if (t.IsKeyword(w)) return true;
  }
  return t.kind == TokenKind::kWord && IsClauseWord(t);
}

// The first token of ^'s left operand (the ^ at `op`), or kNoToken.
size_t XorLeftStart(const std::vector<Token>& tokens, size_t op) {
  size_t k = op;
  int depth = 0;
  while (k > 0) {
    const Token& p = tokens[k - 1];
    if (p.IsSymbol(")") || p.IsSymbol("]")) {
      ++depth;
    } else if (p.IsSymbol("(") || p.IsSymbol("[")) {
      if (depth == 0) break;
      --depth;
    } else if (depth == 0 && StopsXorOperand(p) && !p.IsSymbol("^")) {  // a ^ b ^ c: left first
      break;
    }
    --k;
  }
  return k == op ? kNoToken : k;
}

// One past the last token of ^'s right operand (the ^ at `op`), or kNoToken. An operand ends
// before a word that follows it without an operator (an alias: SELECT 12 ^ 10 v).
size_t XorRightEnd(const std::vector<Token>& tokens, size_t op) {
  size_t k = op + 1;
  bool need = true;  // an operand (or a prefix sign) is expected
  for (;;) {
    const Token& t = tokens[k];
    if (t.IsSymbol("(") || t.IsSymbol("[")) {
      size_t close = CloseOf(tokens, k, nullptr);
      if (close == kNoToken) return kNoToken;
      k = close + 1;
      need = false;
      continue;
    }
    if (need) {
      if (t.IsSymbol("-") || t.IsSymbol("+") || t.IsSymbol("~")) {
        ++k;
      } else if (t.kind == TokenKind::kNumber || t.kind == TokenKind::kString ||
                 (IsName(t) && !StopsXorOperand(t))) {
        ++k;
        need = false;
        // 5L, DATE'2024-01-01': the suffix or the literal glued to the word.
        if (tokens[k].begin == t.end &&
            (tokens[k].kind == TokenKind::kWord || tokens[k].kind == TokenKind::kString)) {
          ++k;
        }
      } else {
        break;
      }
      continue;
    }
    static const char* const kTighter[] = {"+", "-", "*", "/", "%", "&", "||", ".", "::"};
    bool tighter = false;
    for (const char* s : kTighter) tighter = tighter || t.IsSymbol(s);
    if (!tighter) break;
    ++k;
    need = true;
  }
  return k == op + 1 || need ? kNoToken : k;
}

}  // namespace

void RewriteClauses(std::string_view sql, const std::vector<Token>& tokens,
                    std::vector<Edit>* edits) {
  (void)sql;
  const bool range_column = NamesRangeColumn(tokens);
  for (size_t i = 0; tokens[i].kind != TokenKind::kEnd; ++i) {
    const Token& t = tokens[i];
    const Token& next = tokens[i + 1];
    if (t.IsKeyword("left") && (next.IsKeyword("semi") || next.IsKeyword("anti")) &&
        tokens[i + 2].IsKeyword("join")) {
      edits->push_back({t.begin, next.begin, ""});
    } else if ((t.IsKeyword("sort") || t.IsKeyword("cluster")) && next.IsKeyword("by") && i > 0 &&
               EndsOperand(tokens[i - 1])) {
      edits->push_back({t.begin, t.end, "ORDER"});
      NullsFirst(tokens, i + 1, edits);
    } else if (t.IsKeyword("distribute") && next.IsKeyword("by") && i > 0 &&
               EndsOperand(tokens[i - 1])) {
      size_t end = ListEnd(tokens, i + 2);
      if (end > i + 2) edits->push_back({t.begin, tokens[end - 1].end, ""});
    } else if (t.IsKeyword("minus") && i > 0 && EndsOperand(tokens[i - 1]) &&
               (next.IsKeyword("select") || next.IsSymbol("(") || next.IsKeyword("all") ||
                next.IsKeyword("distinct"))) {
      edits->push_back({t.begin, t.end, "EXCEPT"});
    } else if (t.IsKeyword("except") && i > 1 && tokens[i - 1].IsSymbol("*") &&
               !tokens[i - 2].IsKeyword("columns") &&  // AUTO CDC's COLUMNS * EXCEPT (...)
               next.IsSymbol("(") && !tokens[i + 2].IsKeyword("select")) {
      edits->push_back({t.begin, t.end, "EXCLUDE"});
    } else if ((t.IsKeyword("rlike") || t.IsKeyword("regexp")) && i > 0 && !next.IsSymbol("(")) {
      const bool negated = tokens[i - 1].IsKeyword("not");
      size_t left = OperandStart(tokens, negated ? i - 1 : i);
      size_t right_end = RightOperandEnd(tokens, i + 1);
      if (left == kNoToken || right_end == kNoToken) continue;
      edits->push_back({tokens[left].begin, tokens[left].begin,
                        negated ? "NOT regexp_matches(" : "regexp_matches("});
      edits->push_back({tokens[negated ? i - 2 : i - 1].end, t.end, ","});
      edits->push_back({tokens[right_end - 1].end, tokens[right_end - 1].end, ")"});
    } else if (IsCall(tokens, i, "count") && tokens[i + 2].IsKeyword("distinct")) {
      std::vector<size_t> commas;
      size_t close = CloseOf(tokens, i + 1, &commas);
      if (close == kNoToken || commas.empty()) continue;
      edits->push_back({tokens[i + 2].end, tokens[i + 2].end, " spark_tuple("});
      edits->push_back({tokens[close].begin, tokens[close].begin, ")"});
    } else if (IsCall(tokens, i, "percentile_disc")) {
      size_t close = CloseOf(tokens, i + 1, nullptr);
      if (close == kNoToken || !tokens[close + 1].IsKeyword("within") ||
          !tokens[close + 2].IsKeyword("group") || !tokens[close + 3].IsSymbol("(")) {
        continue;
      }
      size_t group_close = CloseOf(tokens, close + 3, nullptr);
      if (group_close == kNoToken || tokens[group_close + 1].IsKeyword("over") ||
          tokens[group_close + 1].IsKeyword("filter")) {
        continue;
      }
      edits->push_back({t.begin, t.begin, "CAST("});
      edits->push_back({tokens[group_close].end, tokens[group_close].end, " AS DOUBLE)"});
    } else if (t.IsKeyword("order") && next.IsKeyword("by")) {
      NullsFirst(tokens, i + 1, edits);
    } else if (t.IsSymbol("<=") && next.IsSymbol(">") && next.begin == t.end) {
      edits->push_back({t.begin, next.end, "IS NOT DISTINCT FROM"});
    } else if (t.IsSymbol("^")) {
      size_t left = XorLeftStart(tokens, i);
      size_t right_end = XorRightEnd(tokens, i);
      if (left == kNoToken || right_end == kNoToken) continue;
      Edit open{tokens[left].begin, tokens[left].begin, "xor("};
      open.span_end = tokens[right_end - 1].end;
      edits->push_back(std::move(open));
      edits->push_back({t.begin, t.end, ","});
      edits->push_back({tokens[right_end - 1].end, tokens[right_end - 1].end, ")"});
    } else if (IsCall(tokens, i, "range") && i > 0 && !range_column &&
               (tokens[i - 1].IsKeyword("from") || tokens[i - 1].IsKeyword("join"))) {
      RangeRelation(tokens, i, edits);
    } else if (t.IsKeyword("lateral") && next.IsKeyword("view")) {
      LateralView(tokens, i, edits);
    } else if (t.IsKeyword("div") && i > 0 && EndsOperand(tokens[i - 1]) &&
               !tokens[i - 1].IsKeyword("select") && next.kind != TokenKind::kEnd &&
               (EndsOperand(next) || next.IsSymbol("(") || next.IsSymbol("-"))) {
      edits->push_back({t.begin, t.end, "//"});
    }
  }
}

}  // namespace sluice::dialect
