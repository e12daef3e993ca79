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

}  // namespace

void RewriteClauses(std::string_view sql, const std::vector<Token>& tokens,
                    std::vector<Edit>* edits) {
  (void)sql;
  for (size_t i = 0; tokens[i].kind != TokenKind::kEnd; ++i) {
    const Token& t = tokens[i];
    const Token& next = tokens[i + 1];
    if (t.IsKeyword("left") && (next.IsKeyword("semi") || next.IsKeyword("anti")) &&
        tokens[i + 2].IsKeyword("join")) {
      edits->push_back({t.begin, next.begin, ""});
    } else if ((t.IsKeyword("sort") || t.IsKeyword("cluster")) && next.IsKeyword("by") && i > 0 &&
               EndsOperand(tokens[i - 1])) {
      edits->push_back({t.begin, t.end, "ORDER"});
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
