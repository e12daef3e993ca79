// Edits of a statement's text at token boundaries, and the bracket and operand helpers the
// rewrites of the Spark dialect share (dialect/spark_sql.h). Every rewrite adds Edits over the
// one token list of a statement; ApplyEdits applies them all at once, so rewrites compose
// (CAST(5L AS STRING) is rewritten by the literal and the cast rules side by side). Two edits
// must not replace overlapping ranges; insertions may stand anywhere outside a replaced range.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dialect/tokenizer.h"

namespace sluice::dialect {

inline constexpr size_t kNoToken = std::string_view::npos;

// [begin, end) of the source replaced by `text` (an insertion when begin == end).
struct Edit {
  size_t begin;
  size_t end;
  std::string text;
  // For an insertion that opens a construct (`f(` before an operand): the offset where the
  // construct ends, so that at one offset the outer opening goes first. 0: unknown.
  size_t span_end = 0;
};

// `sql` with `edits` applied. At one offset insertions go before the replacement starting
// there, openings with a span_end first, the one ending last first (a ^ b / c and a / b ^ c
// nest right whatever the order of the rules), then the others in the order they were added;
// an edit inside an already replaced range is dropped (a rule conflict, never a crash).
std::string ApplyEdits(std::string_view sql, std::vector<Edit> edits);

// The index of the token closing the bracket ('(' or '[') opened at `open`, and the indexes
// of its top-level commas (when `commas` is not null). kNoToken when unbalanced.
size_t CloseOf(const std::vector<Token>& tokens, size_t open, std::vector<size_t>* commas);

// The index of the token opening the bracket closed at `close`, or kNoToken.
size_t OpenOf(const std::vector<Token>& tokens, size_t close);

// True for a word that may stand right before '(' without being a function name (SELECT, IN,
// AND, OVER, ...).
bool IsClauseWord(const Token& t);

// A name token: a word, a "quoted" or a `backquoted` name.
bool IsName(const Token& t);

// True when token `i` is a function call's name: a word (not after '.', not a clause word)
// followed by '('.
bool IsCall(const std::vector<Token>& tokens, size_t i, std::string_view name);

// The index of the first token of the operand ending right before token `before` (a postfix
// `::`, an infix RLIKE): a literal (with its prefix X'..' or suffix 5L), or a chain of names,
// calls f(...) and parenthesized expressions joined by '.', each with [...] subscripts (a.b,
// headers[3].value, f(x).y, (a || b)). kNoToken when the operand has another form.
size_t OperandStart(const std::vector<Token>& tokens, size_t before);

}  // namespace sluice::dialect
