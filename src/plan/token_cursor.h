// TokenCursor: the reading position of a hand-written recursive-descent parser over the tokens
// of one statement (tokenizer.h), with the matching and error helpers every such parser needs.
// Errors are InvalidArgument "syntax error at line L, column C: expected X, found 'Y'".
//
// Ownership: `sql` must outlive the cursor (tokens point into it by offset).
// Thread safety: one thread.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "dialect/tokenizer.h"

namespace sluice::plan {

class TokenCursor {
 public:
  // `tokens` must end with a kEnd token (as Tokenize returns them).
  TokenCursor(std::string_view sql, std::vector<dialect::Token> tokens)
      : sql_(sql), tokens_(std::move(tokens)) {}

  // The token `ahead` positions on (the final kEnd when past the end).
  const dialect::Token& Peek(size_t ahead = 0) const;
  // Returns the current token and moves past it (never past kEnd).
  const dialect::Token& Next();
  // At kEnd, or at a final ';'.
  bool AtEnd() const;
  // Consume the keyword / keyword sequence / symbol when it is next; false (nothing consumed)
  // otherwise.
  bool Keyword(std::string_view keyword);
  bool Keywords(std::initializer_list<std::string_view> keywords);
  bool Symbol(std::string_view symbol);

  // The syntax error at the current token: "expected <expected>, found <token>".
  Status Error(const std::string& expected) const;
  Status ExpectKeyword(std::string_view keyword);
  Status ExpectSymbol(std::string_view symbol);
  // An optional ';', then the end of the statement.
  Status ExpectEnd();
  // A word, "quoted" or `backticked` identifier; its text.
  Result<std::string> Identifier();

 protected:
  std::string_view sql_;
  std::vector<dialect::Token> tokens_;
  size_t pos_ = 0;

 private:
  std::string Describe(const dialect::Token& t) const;
};

}  // namespace sluice::plan
