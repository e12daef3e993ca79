// Spark's literal spellings (rules.h):
//
//   Spark                  rewritten to                  why
//   5L  5S  5Y             CAST(5 AS BIGINT / SMALLINT / TINYINT)   typed integer suffixes
//   1.5D  1.5F             CAST(1.5 AS DOUBLE / FLOAT)
//   1.50BD                 CAST('1.50' AS DECIMAL(3, 2))  the digits give precision and scale
//   X'7B22'                unhex('7B22')                 DuckDB reads X'..' as text
//   'it\'s', 'a\nb'        'it''s', 'a<newline>b'        Spark's backslash escapes
//   r'\d+'                 '\d+'                         Spark's raw strings
//   'a' 'b'                'ab'                          adjacent literals are one (not in
//                                                        OPTIONS / TBLPROPERTIES ('k' 'v')
//                                                        lists, where they are a key and a value)
//   "text", DATE"2024-01-01"  'text', DATE'2024-01-01'  a double-quoted literal is a string
//                                                        in Spark (as by default: a name is
//                                                        quoted `name`); DuckDB reads a name
//   s LIKE 'a\\_b'          s LIKE 'a\_b' ESCAPE '\'     Spark's LIKE escapes with a backslash
//   -2147483648            CAST(-2147483648 AS INT)      the sign is part of Spark's literal:
//   -9223372036854775808   CAST(... AS BIGINT)           the smallest INT / BIGINT (DuckDB
//                                                        negates 2147483648, a BIGINT)
#include <string>

#include "common/strings.h"
#include "dialect/rules.h"
#include "dialect/token_edits.h"

namespace sluice::dialect {
namespace {

struct Suffix {
  const char* spark;
  const char* type;
};
constexpr Suffix kSuffixes[] = {
    {"L", "BIGINT"}, {"S", "SMALLINT"}, {"Y", "TINYINT"}, {"D", "DOUBLE"}, {"F", "FLOAT"},
};

// DECIMAL(p, s) of the digits of a plain number (1.50 -> 3, 2).
std::string DecimalTypeOf(const std::string& number) {
  size_t dot = number.find('.');
  size_t int_digits = 0, scale = 0;
  bool leading = true;
  for (size_t k = 0; k < number.size(); ++k) {
    if (number[k] == '.' || number[k] == '_') continue;
    if (dot == std::string::npos || k < dot) {
      if (leading && number[k] == '0') continue;
      leading = false;
      ++int_digits;
    } else {
      ++scale;
    }
  }
  size_t precision = int_digits + scale;
  if (precision == 0) precision = 1;
  return "DECIMAL(" + std::to_string(precision) + ", " + std::to_string(scale) + ")";
}

// True when token `i` stands in the parenthesized list of OPTIONS (...) or TBLPROPERTIES (...),
// whose 'key' 'value' pairs are two literals each.
bool InPropertyList(const std::vector<Token>& tokens, size_t i) {
  int depth = 0;
  for (size_t k = i; k-- > 0;) {
    if (tokens[k].IsSymbol(")")) ++depth;
    if (tokens[k].IsSymbol("(")) {
      if (depth == 0) {
        return k > 0 &&
               (tokens[k - 1].IsKeyword("options") || tokens[k - 1].IsKeyword("tblproperties"));
      }
      --depth;
    }
  }
  return false;
}

// True when the string literal at `i` is the pattern of a LIKE / ILIKE without ESCAPE.
bool IsLikePattern(const std::vector<Token>& tokens, size_t i, size_t last) {
  return i > 0 && (tokens[i - 1].IsKeyword("like") || tokens[i - 1].IsKeyword("ilike")) &&
         !tokens[last + 1].IsKeyword("escape");
}

// True when the '-' at `i` is a prefix sign (no operand ends before it).
bool IsPrefixMinus(const std::vector<Token>& tokens, size_t i) {
  if (!tokens[i].IsSymbol("-")) return false;
  if (i == 0) return true;
  const Token& p = tokens[i - 1];
  if (p.kind == TokenKind::kNumber || p.kind == TokenKind::kString || p.IsSymbol(")") ||
      p.IsSymbol("]")) {
    return false;
  }
  return !IsName(p) || (p.kind == TokenKind::kWord && IsClauseWord(p));
}

// True when token `i` stands in the arguments of a function call (the innermost open '('
// follows a word and opens no subquery): EXTRACT(YEAR FROM x), trim('x' FROM s).
bool InCallArguments(const std::vector<Token>& tokens, size_t i) {
  int depth = 0;
  for (size_t k = i; k-- > 0;) {
    if (tokens[k].IsSymbol(")")) ++depth;
    if (tokens[k].IsSymbol("(") && depth-- == 0) {
      return k > 0 && tokens[k - 1].kind == TokenKind::kWord &&
             !(tokens[k + 1].IsKeyword("select") || tokens[k + 1].IsKeyword("with"));
    }
  }
  return false;
}

// True when the double-quoted string at `i` stands where Spark's grammar takes a name only (a
// table after FROM / JOIN / INTO / UPDATE / TABLE, an alias after AS, a qualifier before '.'):
// Spark refuses it there, and such text meant a name when Sluice read "..." as one.
bool StandsForAName(const std::vector<Token>& tokens, size_t i) {
  static const char* const kBeforeNames[] = {"from", "join", "into", "update", "table", "as"};
  if (tokens[i + 1].IsSymbol(".")) return true;
  if (i == 0 || InCallArguments(tokens, i)) return false;
  for (const char* w : kBeforeNames) {
    if (tokens[i - 1].IsKeyword(w)) return true;
  }
  return false;
}

}  // namespace

Status RewriteLiterals(std::string_view sql, const std::vector<Token>& tokens,
                       std::vector<Edit>* edits) {
  for (size_t i = 0; tokens[i].kind != TokenKind::kEnd; ++i) {
    const Token& t = tokens[i];
    const Token& next = tokens[i + 1];
    if (t.kind == TokenKind::kNumber &&
        (t.text == "2147483648" || t.text == "9223372036854775808") && i > 0 &&
        IsPrefixMinus(tokens, i - 1) && !(next.kind == TokenKind::kWord && next.begin == t.end)) {
      const char* type = t.text.size() == 10 ? "INT" : "BIGINT";
      edits->push_back(
          {tokens[i - 1].begin, t.end, std::string("CAST(-") + t.text + " AS " + type + ")"});
      continue;
    }
    if (t.kind == TokenKind::kNumber && next.kind == TokenKind::kWord && next.begin == t.end &&
        t.text.find_first_of("eE") == std::string::npos) {
      if (next.IsKeyword("bd")) {
        edits->push_back({t.begin, next.end,
                          "CAST(" + QuoteLiteral(t.text) + " AS " + DecimalTypeOf(t.text) + ")"});
        ++i;
        continue;
      }
      for (const Suffix& s : kSuffixes) {
        if (!next.IsKeyword(s.spark)) continue;
        const bool integral = t.text.find('.') == std::string::npos;
        if (!integral && s.type[0] != 'D' && s.type[0] != 'F') break;  // 1.5L is no literal
        edits->push_back({t.begin, next.end, "CAST(" + t.text + " AS " + s.type + ")"});
        ++i;
        break;
      }
      continue;
    }
    if (t.IsKeyword("x") && next.kind == TokenKind::kString && next.begin == t.end) {
      edits->push_back({t.begin, next.end, "unhex(" + QuoteLiteral(next.text) + ")"});
      ++i;
      continue;
    }
    if (t.kind != TokenKind::kString) continue;
    if (sql[t.begin] == '"' && StandsForAName(tokens, i)) {
      return Status::InvalidArgument(
          std::string(sql.substr(t.begin, t.end - t.begin)) + " at " +
          DescribePosition(sql, t.begin) +
          " is a string literal in Spark SQL, where a name stands: quote a name with backquotes, "
          "`" +
          t.text + "`");
    }
    // Prefixed literals (DATE'..', TIMESTAMP'..') keep their prefix; only a string spelled
    // otherwise than the engine's (DATE"..", an escape) is quoted again.
    if (i > 0 && tokens[i - 1].kind == TokenKind::kWord && tokens[i - 1].end == t.begin) {
      if (t.spark_escaped) edits->push_back({t.begin, t.end, QuoteLiteral(t.text)});
      continue;
    }
    size_t last = i;
    std::string value = t.text;
    bool changed = t.spark_escaped;
    const bool properties = InPropertyList(tokens, i);
    while (!properties && tokens[last + 1].kind == TokenKind::kString &&
           sql[tokens[last + 1].begin] != '$') {
      ++last;
      value += tokens[last].text;
      changed = true;
    }
    if (changed && sql[t.begin] != '$') {
      edits->push_back({t.begin, tokens[last].end, QuoteLiteral(value)});
    }
    if (IsLikePattern(tokens, i, last) && value.find('\\') != std::string::npos) {
      edits->push_back({tokens[last].end, tokens[last].end, " ESCAPE '\\'"});
    }
    i = last;
  }
  return Status::OK();
}

}  // namespace sluice::dialect
