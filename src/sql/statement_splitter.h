// Splits SQL text into statements at top-level ';', ignoring ';' inside string literals
// ('...' with '' and Spark's backslash escapes, r'...' raw), quoted identifiers ("..."),
// dollar-quoted strings ($$...$$ and $tag$...$tag$), line comments (-- ...) and block comments
// (/* ... */).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sluice::sql {

struct StatementText {
  std::string text;  // without the terminating ';', trimmed; comments kept inside
  int line = 1;      // 1-based line of the statement's first non-blank character
};

// Returns the non-empty statements of `script` (a statement that is only whitespace and
// comments is dropped). `first_line` is the line number of the script's first line.
std::vector<StatementText> SplitStatements(std::string_view script, int first_line = 1);

// True when `text` ends inside a string, quoted identifier or block comment, or has content
// after its last top-level ';' (the interactive shell keeps reading lines until this is false).
bool IsIncomplete(std::string_view text);

}  // namespace sluice::sql
