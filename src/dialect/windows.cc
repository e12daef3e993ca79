// Spark's window() in a batch query (rules.h):
//
//   Spark                                  rewritten to
//   window(ts, '10 minutes')               spark_window(ts, '10 minutes')   {start, end}: the
//                                                                           engine's function
//   SELECT window.start, count(*)          SELECT spark_window(ts, '1 hour').start, count(*)
//     ... GROUP BY window(ts, '1 hour')      ... GROUP BY spark_window(ts, '1 hour')
//                                            HAVING spark_window(ts, '1 hour') IS NOT NULL
//
// Grouping by window(...) names the group `window` in Spark: a bare `window` of the statement is
// that group, when the statement groups by exactly one window(...) (a `window` column of a
// table is then hidden, as in Spark); as a whole SELECT item it keeps the name window. Spark drops
// the rows whose time is NULL from a window aggregation: the HAVING drops their group (ANDed with
// the statement's own HAVING). Months and sliding windows are refused by the engine's function
// (engine/spark_datetime.h).
//
// Only for batch statements: a streaming one (STREAM, STREAMING TABLE, FLOW) keeps window(...)
// for the streaming planner, which plans windows itself (plan/sql_ast.h).
#include <string>

#include "dialect/rules.h"
#include "dialect/token_edits.h"

namespace sluice::dialect {
namespace {

bool IsStreamingStatement(const std::vector<Token>& tokens) {
  for (size_t i = 0; tokens[i].kind != TokenKind::kEnd; ++i) {
    const Token& t = tokens[i];
    if (t.IsKeyword("stream") || t.IsKeyword("streaming")) return true;
    if (t.IsKeyword("flow") && i > 0 && tokens[0].IsKeyword("create")) return true;
  }
  return false;
}

bool IsWindowCall(const std::vector<Token>& tokens, size_t i) {
  return tokens[i].kind == TokenKind::kWord && IsCall(tokens, i, "window");
}

// True for a word that ends a GROUP BY list or a HAVING condition at its level.
bool EndsClause(const Token& t) {
  static const char* const kWords[] = {"having", "order",   "limit",      "qualify", "window",
                                       "union",  "except",  "intersect",  "offset",  "fetch",
                                       "sort",   "cluster", "distribute", "minus"};
  for (const char* w : kWords) {
    if (t.IsKeyword(w)) return true;
  }
  return false;
}

// One past the last token of the clause whose first token is `from`: the next clause word,
// ')', ';' or the end at its level.
size_t ClauseEnd(const std::vector<Token>& tokens, size_t from) {
  for (size_t k = from;; ++k) {
    const Token& t = tokens[k];
    if (t.kind == TokenKind::kEnd || t.IsSymbol(")") || t.IsSymbol(";")) return k;
    if (t.IsSymbol("(") || t.IsSymbol("[")) {
      size_t close = CloseOf(tokens, k, nullptr);
      if (close == kNoToken) return kNoToken;
      k = close;
      continue;
    }
    if (k > from && t.kind == TokenKind::kWord && EndsClause(t) &&
        !(t.IsKeyword("window") && tokens[k + 1].IsSymbol("("))) {
      return k;
    }
  }
}

struct GroupedWindow {
  size_t call = kNoToken;  // the `window` token
  size_t close = kNoToken;
  size_t list_end = kNoToken;  // one past the GROUP BY list
};

}  // namespace

void RewriteBatchWindows(std::string_view sql, const std::vector<Token>& tokens,
                         std::vector<Edit>* edits) {
  if (IsStreamingStatement(tokens)) return;
  std::vector<GroupedWindow> grouped;
  bool any = false;
  for (size_t i = 0; tokens[i].kind != TokenKind::kEnd; ++i) {
    if (IsWindowCall(tokens, i)) {
      any = true;
      edits->push_back({tokens[i].begin, tokens[i].end, "spark_window"});
    }
    if (!(tokens[i].IsKeyword("group") && tokens[i + 1].IsKeyword("by"))) continue;
    const size_t end = ClauseEnd(tokens, i + 2);
    if (end == kNoToken) continue;
    // The items of the list that are a whole window(...) call.
    size_t item = i + 2;
    for (size_t k = i + 2; k <= end; ++k) {
      if (k < end && (tokens[k].IsSymbol("(") || tokens[k].IsSymbol("["))) {
        k = CloseOf(tokens, k, nullptr);
        if (k == kNoToken || k >= end) break;
        continue;
      }
      if (k < end && !tokens[k].IsSymbol(",")) continue;
      if (IsWindowCall(tokens, item)) {
        size_t close = CloseOf(tokens, item + 1, nullptr);
        if (close != kNoToken && close + 1 == k) grouped.push_back({item, close, end});
      }
      item = k + 1;
    }
  }
  if (!any || grouped.size() != 1) return;
  const GroupedWindow& g = grouped[0];
  std::string call =
      "spark_window" + std::string(sql.substr(tokens[g.call + 1].begin,
                                              tokens[g.close].end - tokens[g.call + 1].begin));
  if (auto rewritten = RewriteFragment(call, {}); rewritten.ok()) call = *rewritten;
  // The group's name: a bare `window` (not a call, not a field, not WINDOW w AS (...)).
  for (size_t i = 0; tokens[i].kind != TokenKind::kEnd; ++i) {
    const Token& t = tokens[i];
    if (t.kind != TokenKind::kWord || !t.IsKeyword("window") || tokens[i + 1].IsSymbol("(") ||
        (i > 0 && tokens[i - 1].IsSymbol(".")) ||
        (IsName(tokens[i + 1]) && tokens[i + 2].IsKeyword("as"))) {
      continue;
    }
    if (i > 0 && tokens[i - 1].IsKeyword("as")) continue;  // an alias named window
    // A whole SELECT item keeps Spark's name for the column: window.
    const Token& next = tokens[i + 1];
    const bool item =
        i > 0 &&
        (tokens[i - 1].IsKeyword("select") || tokens[i - 1].IsKeyword("distinct") ||
         tokens[i - 1].IsSymbol(",")) &&
        (next.IsSymbol(",") || next.IsKeyword("from") || next.kind == TokenKind::kEnd);
    edits->push_back({t.begin, t.end, item ? call + " AS \"window\"" : call});
  }
  // Rows without a time are in no window: their group is dropped.
  const Token& after = tokens[g.list_end];
  if (after.IsKeyword("having")) {
    const size_t cond_end = ClauseEnd(tokens, g.list_end + 1);
    if (cond_end == kNoToken) return;
    edits->push_back({after.end, after.end, " " + call + " IS NOT NULL AND ("});
    edits->push_back({tokens[cond_end - 1].end, tokens[cond_end - 1].end, ")"});
  } else {
    const size_t last = tokens[g.list_end - 1].end;
    edits->push_back({last, last, " HAVING " + call + " IS NOT NULL"});
  }
}

}  // namespace sluice::dialect
