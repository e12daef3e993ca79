// Spark's function spellings whose arguments the engine reads in another shape (rules.h):
//
//   Spark                            rewritten to                        why
//   array(1, 2, 3), array()          list_value(1, 2, 3), list_value()   DuckDB's parser refuses
//                                                                        array(
//   map(k1, v1, k2, v2)              MAP {k1: v1, k2: v2}                DuckDB's map() takes
//                                                                        lists
//   struct(a, t.b, 1 AS x, 2)        struct_pack(a := a, b := t.b,       fields named as Spark
//                                      x := 1, col4 := 2)                names them (col<n>)
//   named_struct('a', 1, 'b', x)     struct_pack("a" := 1, "b" := x)     names are literals in
//                                                                        Spark
//   filter(xs, x -> p)               list_filter(xs, x -> p)             FILTER is a clause in
//   transform(xs, x -> f)            list_transform(xs, x -> f)          DuckDB
//   some / any / char (...)          bool_or / bool_or / chr             reserved words in DuckDB
//   concat_ws, regexp_replace,       spark_<name> (src/engine/spark_*)   DuckDB's namesake has
//   length, json_array_length,                                           other semantics (e.g.
//   date_trunc, trunc, date_sub,                                         regexp_replace replaces
//   dayofweek, weekday,                                                  the first match only,
//   split(s, p), datediff(a, b),                                         concat_ws prints arrays
//   array_sort(xs) (no lambda)                                           as '[a, b]')
//
// A lambda with an index, (x, i) -> ..., counts from 0 in Spark and from 1 in the engine: such a
// transform or filter is refused (InvalidArgument naming the position).
#include <string>

#include "common/strings.h"
#include "dialect/rules.h"

namespace sluice::dialect {
namespace {

struct Rename {
  const char* spark;
  const char* engine;
};
// Names the engine's parser reserves (SOME / ANY (subquery), CHAR the type), called as Spark's
// functions.
constexpr Rename kRenames[] = {
    {"some", "bool_or"},
    {"any", "bool_or"},
    {"char", "chr"},
};
// Spark's functions whose DuckDB namesakes answer differently: the engine's spark_<name>
// (src/engine/spark_*.cc). `args` is the only argument count renamed (0: any); a call with a
// lambda is left to the engine's namesake.
struct SemanticRename {
  const char* spark;
  const char* engine;
  size_t args;
};
constexpr SemanticRename kSemanticRenames[] = {
    {"concat_ws", "spark_concat_ws", 0},
    {"regexp_replace", "spark_regexp_replace", 0},
    {"length", "spark_length", 1},
    {"json_array_length", "spark_json_array_length", 1},
    {"date_trunc", "spark_date_trunc", 2},
    {"trunc", "spark_trunc", 2},
    {"date_sub", "spark_date_sub", 2},
    {"dayofweek", "spark_dayofweek", 1},
    {"weekday", "spark_weekday", 1},
    {"split", "spark_split", 2},
    {"datediff", "spark_datediff", 2},
    {"array_sort", "spark_array_sort", 1},
    // Types and numbers (engine/spark_casts.h, spark_scalars.cc), first/last's ignoreNulls,
    // to_timestamp's Spark text (engine/spark_collections.cc, spark_datetime.cc).
    {"typeof", "spark_typeof", 1},
    {"ceil", "spark_ceil", 1},
    {"ceiling", "spark_ceil", 1},
    {"floor", "spark_floor", 1},
    {"sign", "signum", 1},
    {"sqrt", "spark_sqrt", 1},
    {"conv", "spark_conv", 3},
    {"to_timestamp", "spark_to_timestamp", 0},
    {"first", "spark_first", 2},
    {"last", "spark_last", 2},
};
// Higher-order functions: the engine's namesake with a one-parameter lambda.
constexpr Rename kLambdaRenames[] = {
    {"filter", "list_filter"},
    {"transform", "list_transform"},
};

// True when the call whose '(' is at `open` has a lambda (x, i) -> with two parameters.
bool HasIndexLambda(const std::vector<Token>& tokens, size_t open, size_t close) {
  for (size_t k = open + 1; k + 5 < close; ++k) {
    if (tokens[k].IsSymbol("(") && IsName(tokens[k + 1]) && tokens[k + 2].IsSymbol(",") &&
        IsName(tokens[k + 3]) && tokens[k + 4].IsSymbol(")") && tokens[k + 5].IsSymbol("->")) {
      return true;
    }
  }
  return false;
}

// True when the call at [open, close] has a lambda (->) among its arguments.
bool HasLambda(const std::vector<Token>& tokens, size_t open, size_t close) {
  for (size_t k = open + 1; k < close; ++k) {
    if (tokens[k].IsSymbol("->")) return true;
  }
  return false;
}

// The field name Spark gives struct()'s argument tokens[from, to): the alias of `expr AS name`
// (then *alias_at is the AS), a column's name (a, t.a), or col<n>.
std::string StructFieldName(const std::vector<Token>& tokens, size_t from, size_t to, size_t n,
                            size_t* alias_at) {
  *alias_at = kNoToken;
  if (to - from >= 3 && tokens[to - 2].IsKeyword("as") && IsName(tokens[to - 1])) {
    *alias_at = to - 2;
    return tokens[to - 1].text;
  }
  bool chain = IsName(tokens[from]);
  for (size_t k = from + 1; k < to && chain; k += 2) {
    chain = tokens[k].IsSymbol(".") && k + 1 < to && IsName(tokens[k + 1]);
  }
  if (chain && (to - from) % 2 == 1) return tokens[to - 1].text;
  return "col" + std::to_string(n);
}

// True when an expression (a call), not a type or a qualified name, may start after `prev`:
// after a symbol other than '.' and '::', or a clause word other than AS (CAST(x AS MAP(...)),
// a column's type in CREATE TABLE t (m MAP(...)) stay types).
bool ExpressionFollows(const Token& prev) {
  if (prev.kind == TokenKind::kSymbol) return !prev.IsSymbol(".") && !prev.IsSymbol("::");
  return IsClauseWord(prev) && !prev.IsKeyword("as");
}

// True when an argument of the call at [open, close] ends with a top-level `AS name`.
bool HasAlias(const std::vector<Token>& tokens, size_t open, size_t close) {
  int depth = 0;
  for (size_t k = open; k < close; ++k) {
    if (tokens[k].IsSymbol("(") || tokens[k].IsSymbol("[")) ++depth;
    if (tokens[k].IsSymbol(")") || tokens[k].IsSymbol("]")) --depth;
    if (depth == 1 && tokens[k].IsKeyword("as") && IsName(tokens[k + 1]) &&
        (tokens[k + 2].IsSymbol(",") || k + 2 == close)) {
      return true;
    }
  }
  return false;
}

}  // namespace

Status RewriteFunctions(std::string_view sql, const std::vector<Token>& tokens,
                        std::vector<Edit>* edits) {
  for (size_t i = 0; tokens[i].kind != TokenKind::kEnd; ++i) {
    const Token& t = tokens[i];
    if (t.kind != TokenKind::kWord || !tokens[i + 1].IsSymbol("(")) continue;
    if (i > 0 && !ExpressionFollows(tokens[i - 1])) continue;
    std::vector<size_t> commas;
    const size_t open = i + 1;
    const size_t close = CloseOf(tokens, open, &commas);
    if (close == kNoToken) continue;
    const bool empty = close == open + 1;
    const size_t args = empty ? 0 : commas.size() + 1;
    // The bounds of argument k: [arg_begin(k), arg_end(k)).
    auto arg_begin = [&](size_t k) { return k == 0 ? open + 1 : commas[k - 1] + 1; };
    auto arg_end = [&](size_t k) { return k == args - 1 ? close : commas[k]; };
    if (t.IsKeyword("array")) {
      edits->push_back({t.begin, t.end, "list_value"});
    } else if (t.IsKeyword("map") && args >= 2 && args % 2 == 0) {
      edits->push_back({t.begin, tokens[open].end, "MAP {"});
      for (size_t k = 0; k < commas.size(); ++k) {
        edits->push_back({tokens[commas[k]].begin, tokens[commas[k]].end, k % 2 == 0 ? ":" : ","});
      }
      edits->push_back({tokens[close].begin, tokens[close].end, "}"});
    } else if (t.IsKeyword("struct") && args >= 1 && HasAlias(tokens, open, close)) {
      edits->push_back({t.begin, t.end, "struct_pack"});
      for (size_t k = 0; k < args; ++k) {
        size_t alias_at = kNoToken;
        std::string name = StructFieldName(tokens, arg_begin(k), arg_end(k), k + 1, &alias_at);
        const Token& first = tokens[arg_begin(k)];
        edits->push_back({first.begin, first.begin, QuoteIdentifier(name) + " := "});
        if (alias_at != kNoToken) {
          edits->push_back({tokens[alias_at - 1].end, tokens[arg_end(k) - 1].end, ""});
        }
      }
    } else {
      if (i > 0 && tokens[i - 1].IsSymbol(")")) continue;  // count(*) FILTER (WHERE ...)
      const bool after_comparison =
          i > 0 && tokens[i - 1].kind == TokenKind::kSymbol &&
          (tokens[i - 1].text == "=" || tokens[i - 1].text == "<" || tokens[i - 1].text == ">" ||
           tokens[i - 1].text == "<=" || tokens[i - 1].text == ">=" || tokens[i - 1].text == "<>" ||
           tokens[i - 1].text == "!=");
      for (const Rename& r : kRenames) {
        // x = ANY (SELECT ...) is the engine's quantified comparison.
        if (t.IsKeyword(r.spark) && !after_comparison && !tokens[open + 1].IsKeyword("select")) {
          edits->push_back({t.begin, t.end, r.engine});
        }
      }
      for (const SemanticRename& r : kSemanticRenames) {
        if (t.IsKeyword(r.spark) && (r.args == 0 || r.args == args) &&
            !HasLambda(tokens, open, close)) {
          edits->push_back({t.begin, t.end, r.engine});
        }
      }
      for (const Rename& r : kLambdaRenames) {
        if (!t.IsKeyword(r.spark)) continue;
        if (HasIndexLambda(tokens, open, close)) {
          return Status::InvalidArgument(
              std::string(r.spark) +
              " with an index lambda (x, i) -> ... is not supported: Sluice's index would count "
              "from 1 where Spark's counts from 0 (at " +
              DescribePosition(sql, t.begin) + ")");
        }
        edits->push_back({t.begin, t.end, r.engine});
      }
    }
  }
  return Status::OK();
}

}  // namespace sluice::dialect
