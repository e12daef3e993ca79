// Spark's datetime spellings whose units are words (rules.h):
//
//   Spark                                  rewritten to                          why
//   dateadd(DAY, 3, t), date_add(DAY, ..), spark_timestampadd('DAY', 3, t)       the unit is a
//   timestampadd(HOUR, 5, t)                                                     keyword in Spark
//   datediff(HOUR, a, b), date_diff(...),  spark_timestampdiff('HOUR', a, b)     whole units from
//   timestampdiff(MINUTE, a, b)                                                  a to b, as Spark
//                                                                                counts them
//   EXTRACT(SECOND FROM t)                 spark_second_with_fraction(t)         DECIMAL(8,6) with
//                                                                                the fraction
//   d + INTERVAL 1 MONTH, d - INTERVAL     spark_add_months_interval(d,          a DATE stays a
//   '2' YEAR (d a literal, a name, a call)   [-]INTERVAL 1 MONTH)                DATE (DuckDB: a
//                                                                                TIMESTAMP)
//
//   The units: YEAR, QUARTER, MONTH, WEEK, DAY, DAYOFYEAR, HOUR, MINUTE, SECOND, MILLISECOND,
//   MICROSECOND (engine/spark_datetime.h). A unit of another spelling is left to the engine.
#include <string>

#include "common/strings.h"
#include "dialect/rules.h"

namespace sluice::dialect {
namespace {

struct UnitFunction {
  const char* spark;
  const char* engine;
};
constexpr UnitFunction kUnitFunctions[] = {
    {"dateadd", "spark_timestampadd"},      {"date_add", "spark_timestampadd"},
    {"timestampadd", "spark_timestampadd"}, {"datediff", "spark_timestampdiff"},
    {"date_diff", "spark_timestampdiff"},   {"timestampdiff", "spark_timestampdiff"},
};

bool IsUnit(const Token& t) {
  static const char* const kUnits[] = {"year",   "quarter",     "month",      "week",
                                       "day",    "dayofyear",   "hour",       "minute",
                                       "second", "millisecond", "microsecond"};
  if (t.kind != TokenKind::kWord) return false;
  for (const char* u : kUnits) {
    if (t.IsKeyword(u)) return true;
  }
  return false;
}

// `+ INTERVAL n MONTH` (or YEAR) at `op` (the + or -): one past the unit, or kNoToken.
size_t MonthIntervalEnd(const std::vector<Token>& tokens, size_t op) {
  const Token& n = tokens[op + 2];
  const Token& unit = tokens[op + 3];
  if (!tokens[op + 1].IsKeyword("interval") ||
      !(n.kind == TokenKind::kNumber || n.kind == TokenKind::kString)) {
    return kNoToken;
  }
  for (const char* u : {"month", "months", "year", "years"}) {
    if (unit.IsKeyword(u) && !tokens[op + 4].IsKeyword("to")) return op + 4;
  }
  return kNoToken;
}

}  // namespace

void RewriteDatetime(std::string_view sql, const std::vector<Token>& tokens,
                     std::vector<Edit>* edits) {
  (void)sql;
  for (size_t i = 0; tokens[i].kind != TokenKind::kEnd; ++i) {
    const Token& t = tokens[i];
    if (t.IsSymbol("+") || t.IsSymbol("-")) {
      const size_t end = MonthIntervalEnd(tokens, i);
      const size_t start = end == kNoToken ? kNoToken : OperandStart(tokens, i);
      if (start == kNoToken) continue;
      if (start > 0) {  // an operand of a tighter operator is not the left side of the +
        const Token& before = tokens[start - 1];
        if (before.IsSymbol("*") || before.IsSymbol("/") || before.IsSymbol("%") ||
            before.IsSymbol("::") || before.IsSymbol("-") || before.IsSymbol("||")) {
          continue;
        }
      }
      edits->push_back({tokens[start].begin, tokens[start].begin, "spark_add_months_interval("});
      edits->push_back({t.begin, t.end, t.IsSymbol("-") ? ", -" : ","});
      edits->push_back({tokens[end - 1].end, tokens[end - 1].end, ")"});
      continue;
    }
    if (t.kind != TokenKind::kWord || !tokens[i + 1].IsSymbol("(") ||
        (i > 0 && tokens[i - 1].IsSymbol("."))) {
      continue;
    }
    if (t.IsKeyword("extract") && tokens[i + 2].IsKeyword("second") &&
        tokens[i + 3].IsKeyword("from")) {
      edits->push_back({t.begin, tokens[i + 3].end, "spark_second_with_fraction("});
      continue;
    }
    std::vector<size_t> commas;
    if (!IsUnit(tokens[i + 2]) || !tokens[i + 3].IsSymbol(",")) continue;
    const size_t close = CloseOf(tokens, i + 1, &commas);
    if (close == kNoToken || commas.size() != 2) continue;
    for (const UnitFunction& f : kUnitFunctions) {
      if (!t.IsKeyword(f.spark)) continue;
      edits->push_back({t.begin, t.end, f.engine});
      edits->push_back({tokens[i + 2].begin, tokens[i + 2].end, QuoteLiteral(tokens[i + 2].text)});
    }
  }
}

}  // namespace sluice::dialect
