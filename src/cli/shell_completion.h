// Tab completion for `sluice sql`'s interactive shell: SQL keywords, table names and column
// names, as psql and duckdb complete them.
//
// CompleteWord is pure (the shell's libedit glue in sql_shell.cc feeds it the word before the
// cursor and the names it knows), so it is unit-tested without a terminal.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sluice::cli {

// The completions of `prefix` (the word being typed; may be empty): the keywords of Sluice's
// SQL and `names` (tables, columns) that start with it, compared without regard to case, each
// once, keywords first, then names, each group sorted. A keyword takes the case of the prefix
// (upper case unless the prefix has a lower-case letter); a name keeps its own spelling.
std::vector<std::string> CompleteWord(std::string_view prefix,
                                      const std::vector<std::string>& names);

}  // namespace sluice::cli
