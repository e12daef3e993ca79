// Spark's casts (rules.h):
//
//   Spark                              rewritten to               why
//   CAST(x AS STRING)                  spark_string(x)            Spark's CAST(binary AS STRING)
//   TRY_CAST(x AS STRING)              spark_string(x)            decodes UTF-8; DuckDB's cast of
//   x::STRING, string(x)               spark_string(x)            a BLOB escapes bytes ('"' ->
//   (VARCHAR and VARCHAR(n) alike)                                '\x22'); engine/spark_string.h
//   CAST(x AS BINARY), x::BINARY,      spark_binary(x)            Spark encodes the text as UTF-8;
//   TRY_CAST(x AS BINARY), binary(x)                              DuckDB refuses non-ASCII text
//   CAST(x AS ARRAY<STRING>), x::LONG  CAST(x AS VARCHAR[]), ...  Spark's type names (types.h)
//   TIMESTAMP_NTZ'2024-01-15 10:00'    TIMESTAMP'...'             the local date-time literal
//   CAST(x AS T), x::T, TRY_CAST       CAST(spark_cast_input(x,   Spark's reading of x for T an
//   (T: TINYINT, SMALLINT, INT,          'T') AS T),              integral type, DOUBLE, FLOAT,
//   BIGINT and their Spark names,      spark_try_cast_input(...)  DATE or TIMESTAMP, chosen by
//   DOUBLE, FLOAT, REAL, DATE,                                    x's type when the query is bound
//   TIMESTAMP, ARRAY<..>, MAP<..>,                                (engine/spark_casts.h): DOUBLE
//   STRUCT<..>)                                                   -> INT truncates, '2024' is a
//                                                                 DATE, '...+02:00' converts to
//                                                                 UTC, a TIMESTAMP is seconds, a
//                                                                 STRING is no array, map or
//                                                                 struct
//
//   spark_string is a function of the engine, not a replacement of DuckDB's BLOB -> VARCHAR
//   cast: the SQL Sluice generates itself relies on that cast's escaping (the Delta writer's
//   partition values and binary column statistics, rendered by CAST(... AS VARCHAR); the CLI's
//   and the SQL logic test runner's text of a BLOB), and a user's statement is the only text
//   written in Spark's dialect. A BLOB that is not valid UTF-8 is an error (Spark keeps the
//   bytes in its string; a DuckDB VARCHAR cannot hold them). A TRY_CAST gives the same error: a
//   NULL would silently differ from Spark's answer.
#include <algorithm>
#include <cctype>
#include <string>

#include "common/strings.h"

#include "dialect/rules.h"
#include "dialect/types.h"

namespace sluice::dialect {
namespace {

constexpr std::string_view kSparkString = "spark_string";
constexpr std::string_view kSparkBinary = "spark_binary";

// STRING, VARCHAR or VARCHAR(n) at `i` (or with `binary`, BINARY): the index after it, or
// kNoToken.
size_t StringTypeEnd(const std::vector<Token>& tokens, size_t i, bool* binary) {
  *binary = tokens[i].IsKeyword("binary");
  if (tokens[i].IsKeyword("string") || *binary) return i + 1;
  if (!tokens[i].IsKeyword("varchar")) return kNoToken;
  if (tokens[i + 1].IsSymbol("(") && tokens[i + 2].kind == TokenKind::kNumber &&
      tokens[i + 3].IsSymbol(")")) {
    return i + 4;
  }
  return i + 1;
}

// The Spark type at tokens[from, to) in the engine's words, when it differs from the source.
// Returns the engine's type ("" when left to the engine).
std::string ConvertTypeRange(std::string_view sql, const std::vector<Token>& tokens, size_t from,
                             size_t* to, std::vector<Edit>* edits) {
  size_t i = from;
  Result<std::string> type = ConvertType(tokens, &i);
  if (!type.ok() || (*to != kNoToken && i != *to)) return "";  // left to the engine
  *to = i;
  std::string_view source = sql.substr(tokens[from].begin, tokens[i - 1].end - tokens[from].begin);
  if (*type != source) edits->push_back({tokens[from].begin, tokens[i - 1].end, *type});
  return *type;
}

// The targets whose input Spark reads otherwise than the engine's cast (spark_cast_input): the
// types below, and arrays, maps and structs (Spark casts no STRING to them).
bool ReadsInputAsSpark(const std::string& type) {
  if (!type.empty() &&
      (type.back() == ']' || type.rfind("MAP(", 0) == 0 || type.rfind("STRUCT(", 0) == 0)) {
    return true;
  }
  static const char* const kTypes[] = {"TINYINT", "SMALLINT", "INT",  "INTEGER", "BIGINT",
                                       "DOUBLE",  "FLOAT",    "REAL", "DATE",    "TIMESTAMP"};
  for (const char* t : kTypes) {
    if (type.size() == std::string_view(t).size() &&
        std::equal(type.begin(), type.end(), t, [](char a, char b) {
          return std::toupper(static_cast<unsigned char>(a)) == b;
        })) {
      return true;
    }
  }
  return false;
}

}  // namespace

void RewriteCasts(std::string_view sql, const std::vector<Token>& tokens,
                  std::vector<Edit>* edits) {
  // The openings of the :: casts, the outermost of a chain first (added at the end, reversed).
  std::vector<Edit> openers;
  for (size_t i = 0; tokens[i].kind != TokenKind::kEnd; ++i) {
    const Token& t = tokens[i];
    const bool after_dot = i > 0 && tokens[i - 1].IsSymbol(".");
    if ((t.IsKeyword("cast") || t.IsKeyword("try_cast")) && tokens[i + 1].IsSymbol("(") &&
        !after_dot) {
      size_t close = CloseOf(tokens, i + 1, nullptr);  // commas only inside MAP<K, V>
      if (close == kNoToken) continue;
      // The last top-level AS: CAST(a AS STRING); CAST((x AS y) ...) has its AS deeper.
      size_t as = kNoToken;
      int depth = 0;
      for (size_t k = i + 1; k < close; ++k) {
        if (tokens[k].IsSymbol("(") || tokens[k].IsSymbol("[")) ++depth;
        if (tokens[k].IsSymbol(")") || tokens[k].IsSymbol("]")) --depth;
        if (depth == 1 && tokens[k].IsKeyword("as")) as = k;
      }
      if (as == kNoToken) continue;
      bool binary = false;
      if (StringTypeEnd(tokens, as + 1, &binary) == close) {
        edits->push_back({t.begin, t.end, std::string(binary ? kSparkBinary : kSparkString)});
        edits->push_back({tokens[as - 1].end, tokens[close].begin, ""});
        continue;
      }
      size_t end = close;
      const std::string type = ConvertTypeRange(sql, tokens, as + 1, &end, edits);
      if (end == close && ReadsInputAsSpark(type)) {
        edits->push_back({tokens[i + 1].end, tokens[i + 1].end,
                          t.IsKeyword("cast") ? "spark_cast_input(" : "spark_try_cast_input("});
        edits->push_back({tokens[as - 1].end, tokens[as - 1].end, ", " + QuoteLiteral(type) + ")"});
      }
      continue;
    }
    if (t.IsSymbol("::")) {
      // '7'::INT::STRING: the operand is the whole chain of casts before.
      auto chain_start = [&]() {
        size_t start = OperandStart(tokens, i);
        while (start != kNoToken && start > 0 && tokens[start - 1].IsSymbol("::")) {
          start = OperandStart(tokens, start - 1);
        }
        if (start != kNoToken && start > 0 && tokens[start - 1].IsSymbol(":")) {
          return kNoToken;  // parse_json(j):a::STRING
        }
        return start;
      };
      bool binary = false;
      size_t type_end = StringTypeEnd(tokens, i + 1, &binary);
      if (type_end == kNoToken || tokens[type_end].IsSymbol("[")) {
        size_t end = kNoToken;
        const std::string type = ConvertTypeRange(sql, tokens, i + 1, &end, edits);
        size_t start = ReadsInputAsSpark(type) ? chain_start() : kNoToken;
        if (start != kNoToken && !tokens[end].IsSymbol("[")) {
          openers.push_back({tokens[start].begin, tokens[start].begin, "spark_cast_input("});
          edits->push_back({tokens[i - 1].end, tokens[i - 1].end, ", " + QuoteLiteral(type) + ")"});
        }
        continue;
      }
      size_t start = chain_start();
      if (start == kNoToken) continue;
      openers.push_back({tokens[start].begin, tokens[start].begin,
                         std::string(binary ? kSparkBinary : kSparkString) + "("});
      edits->push_back({tokens[i - 1].end, tokens[type_end - 1].end, ")"});
      continue;
    }
    if (t.IsKeyword("timestamp_ntz") && tokens[i + 1].kind == TokenKind::kString &&
        tokens[i + 1].begin == t.end) {
      edits->push_back({t.begin, t.end, "TIMESTAMP"});
      continue;
    }
    if ((t.IsKeyword("string") || t.IsKeyword("binary")) && tokens[i + 1].IsSymbol("(") &&
        !after_dot && !(i > 0 && tokens[i - 1].IsSymbol("::"))) {
      edits->push_back(
          {t.begin, t.end, std::string(t.IsKeyword("binary") ? kSparkBinary : kSparkString)});
    }
  }
  edits->insert(edits->end(), openers.rbegin(), openers.rend());
}

}  // namespace sluice::dialect
