#include "plan/token_cursor.h"

#include "common/strings.h"

namespace sluice::plan {

using dialect::DescribePosition;
using dialect::Token;
using dialect::TokenKind;

const Token& TokenCursor::Peek(size_t ahead) const {
  size_t i = pos_ + ahead;
  return i < tokens_.size() ? tokens_[i] : tokens_.back();
}

const Token& TokenCursor::Next() {
  const Token& t = Peek();
  if (pos_ + 1 < tokens_.size()) ++pos_;
  return t;
}

bool TokenCursor::AtEnd() const {
  return Peek().kind == TokenKind::kEnd ||
         (Peek().IsSymbol(";") && Peek(1).kind == TokenKind::kEnd);
}

bool TokenCursor::Keyword(std::string_view keyword) {
  if (!Peek().IsKeyword(keyword)) return false;
  Next();
  return true;
}

bool TokenCursor::Keywords(std::initializer_list<std::string_view> keywords) {
  size_t i = 0;
  for (std::string_view k : keywords) {
    if (!Peek(i).IsKeyword(k)) return false;
    ++i;
  }
  for (size_t k = 0; k < i; ++k) Next();
  return true;
}

bool TokenCursor::Symbol(std::string_view symbol) {
  if (!Peek().IsSymbol(symbol)) return false;
  Next();
  return true;
}

std::string TokenCursor::Describe(const Token& t) const {
  if (t.kind == TokenKind::kEnd) return "the end of the statement";
  return "'" + std::string(sql_.substr(t.begin, t.end - t.begin)) + "'";
}

Status TokenCursor::Error(const std::string& expected) const {
  return Status::InvalidArgument("syntax error at " + DescribePosition(sql_, Peek().begin) +
                                 ": expected " + expected + ", found " + Describe(Peek()));
}

Status TokenCursor::ExpectKeyword(std::string_view keyword) {
  if (Keyword(keyword)) return Status::OK();
  return Error(AsciiUpper(keyword));
}

Status TokenCursor::ExpectSymbol(std::string_view symbol) {
  if (Symbol(symbol)) return Status::OK();
  return Error("'" + std::string(symbol) + "'");
}

Status TokenCursor::ExpectEnd() {
  Symbol(";");
  if (Peek().kind != TokenKind::kEnd) return Error("the end of the statement");
  return Status::OK();
}

Result<std::string> TokenCursor::Identifier() {
  const Token& t = Peek();
  if (t.kind == TokenKind::kWord || t.kind == TokenKind::kQuotedIdent ||
      t.kind == TokenKind::kBacktick) {
    Next();
    return t.text;
  }
  return Error("a name");
}

}  // namespace sluice::plan
