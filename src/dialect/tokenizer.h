// A SQL tokenizer for the statements Sluice parses itself (docs/sql-frontend.md). It does not
// understand DuckDB's whole grammar: it cuts text into tokens with their byte offsets so that
// Sluice's parsers can recognise their clauses and hand the rest, as the original text, to the
// engine. The Spark dialect's rewrites (dialect/spark_sql.h) read a user's text with Spark's
// string literals (Lexing::kSpark): backslash escapes and r'raw' strings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace sluice::dialect {

enum class TokenKind {
  kWord,         // identifier or keyword: [A-Za-z_][A-Za-z0-9_$]*
  kQuotedIdent,  // "name" ("" escapes), the unquoted name; Lexing::kSpark reads a kString
  kBacktick,     // `path or name` (Spark's form); text holds the content
  kString,       // 'text' ('' escapes), $tag$text$tag$, Spark's "text"; the unquoted value
  kNumber,       // 12, 1.5, 1e3, .5
  kSymbol,       // punctuation and operators: ( ) , . ; = < > <= >= <> != + - * / % || :: => etc.
  kEnd,          // after the last token
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;  // see TokenKind
  size_t begin = 0;  // byte offset of the token's first character in the source
  size_t end = 0;    // one past its last character
  // kString read with Lexing::kSpark: the source held a backslash escape, was r'raw' or
  // "double-quoted", so it is not spelled as the engine's string of `text` is.
  bool spark_escaped = false;

  // True for a kWord equal to `keyword` ignoring case.
  bool IsKeyword(std::string_view keyword) const;
  bool IsSymbol(std::string_view symbol) const {
    return kind == TokenKind::kSymbol && text == symbol;
  }
};

// How string literals are read. kDuckDb: '' is a quote, a backslash is a character. kSpark
// (Spark SQL's lexer): a backslash escapes the next character (\n \t \r \b \0 \Z \uXXXX, octal
// \ooo; \% and \_ stay two characters for LIKE; any other \c is c), "..." is a string as '...'
// (Spark's default), and r'...' / R"..." are raw (no escapes; the token begins at the r).
enum class Lexing { kDuckDb, kSpark };

// Tokenizes `sql`; comments and whitespace are skipped. The last token is kEnd. InvalidArgument
// for an unterminated string, identifier or comment, naming the line and column.
Result<std::vector<Token>> Tokenize(std::string_view sql, Lexing lexing = Lexing::kDuckDb);

// "line L, column C" of a byte offset, for error messages.
std::string DescribePosition(std::string_view sql, size_t offset);

}  // namespace sluice::dialect
