// The rules of the Spark dialect (dialect/spark_sql.h runs them): each reads the one token list
// of a statement (Lexing::kSpark) and adds the Edits that turn Spark's spellings into the
// engine's. A rule touches only the tokens of its own concern, so that the edits of all rules
// apply together (token_edits.h). The file of each rule holds its table of spellings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/status.h"
#include "dialect/token_edits.h"
#include "dialect/tokenizer.h"

namespace sluice::dialect {

// arithmetic.cc: a / b and a % b as spark_divide / spark_remainder (Spark's result types and
// ANSI errors). First of the rules: its closing parenthesis goes before the insertions of the
// others at the same offset (ORDER BY a / b NULLS FIRST).
void RewriteArithmetic(std::string_view sql, const std::vector<Token>& tokens,
                       std::vector<Edit>* edits);

// windows.cc: window(ts, size) of a batch statement as spark_window, the group GROUP BY
// window(...) names `window` (nothing for a streaming statement: the planner plans windows).
void RewriteBatchWindows(std::string_view sql, const std::vector<Token>& tokens,
                         std::vector<Edit>* edits);

// literals.cc: 5L 5S 5Y 1.5D 1.5F 1.50BD, X'7B22', backslash escapes and r'raw' strings,
// "double-quoted" strings, adjacent string literals 'a' 'b'. InvalidArgument for a
// double-quoted string where a name stands (FROM "t", AS "x"), naming it and its position.
Status RewriteLiterals(std::string_view sql, const std::vector<Token>& tokens,
                       std::vector<Edit>* edits);

// casts.cc: CAST / TRY_CAST / :: to STRING and BINARY (Spark's UTF-8 semantics), Spark's type
// names and ARRAY<T> / MAP<K, V> / STRUCT<a: T> where a type stands.
void RewriteCasts(std::string_view sql, const std::vector<Token>& tokens, std::vector<Edit>* edits);

// names.cc: the words Spark lets name a column that the engine's parser reserves.
void RewriteNames(std::string_view sql, const std::vector<Token>& tokens, std::vector<Edit>* edits);

// functions.cc: function names and argument shapes (array(...), map(k, v, ...), struct(...),
// named_struct, concat, higher-order functions with lambdas, 0-based subscripts xs[i], and the
// table of renames). InvalidArgument for a spelling whose Spark answer the engine cannot give,
// naming it and its position.
struct Substitution;
// `outer`: the substitutions of the fragment `sql` is (RewriteFragment), handed on to the
// fragments of the calls it rewrites whole.
Status RewriteFunctions(std::string_view sql, const std::vector<Token>& tokens,
                        std::vector<Edit>* edits, const std::vector<Substitution>* outer = nullptr);

// datetime.cc: dateadd / timestampadd / datediff / timestampdiff with a unit word,
// EXTRACT(SECOND FROM t) with its fraction.
void RewriteDatetime(std::string_view sql, const std::vector<Token>& tokens,
                     std::vector<Edit>* edits);

// json_paths.cc: parse_json(j):a.b[0] paths.
void RewriteJsonPaths(std::string_view sql, const std::vector<Token>& tokens,
                      std::vector<Edit>* edits);

// clauses.cc: LEFT SEMI / LEFT ANTI JOIN, SORT BY, DISTRIBUTE BY, CLUSTER BY, MINUS,
// SELECT * EXCEPT (...), a div b, RLIKE, LATERAL VIEW explode, FROM range(...) (column id).
void RewriteClauses(std::string_view sql, const std::vector<Token>& tokens,
                    std::vector<Edit>* edits);

// A name replaced in a fragment: a lambda's parameter by the engine's expression for it.
struct Substitution {
  std::string name;  // compared ignoring case
  std::string text;
};

// spark_sql.cc: a fragment of a statement (an argument, a lambda's body) in the engine's words,
// every rule above applied, and each word of `substitutions` replaced where it stands as a name
// (not after '.', not before '(', not a nested lambda's parameter). For the rules that move or
// repeat an argument's text (functions.cc).
Result<std::string> RewriteFragment(std::string_view text,
                                    const std::vector<Substitution>& substitutions);

}  // namespace sluice::dialect
