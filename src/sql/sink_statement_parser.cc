#include "sql/sink_statement_parser.h"

#include <set>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "dialect/tokenizer.h"
#include "plan/token_cursor.h"
#include "sql/streaming_statement_parser.h"

namespace sluice::sql {
namespace {

using dialect::Token;
using dialect::TokenKind;

class Parser : private plan::TokenCursor {
 public:
  Parser(std::string_view sql, std::vector<Token> tokens) : TokenCursor(sql, std::move(tokens)) {}

  Result<std::optional<SinkStatement>> Parse() {
    if (Peek().IsKeyword("create")) {
      const bool or_replace = Peek(1).IsKeyword("or") && Peek(2).IsKeyword("replace");
      const size_t k = or_replace ? 3 : 1;
      if (!Peek(k).IsKeyword("sink")) return std::optional<SinkStatement>();
      for (size_t i = 0; i <= k; ++i) Next();
      return Wrap(ParseCreate(or_replace));
    }
    if (Peek().IsKeyword("drop") && Peek(1).IsKeyword("sink")) {
      Next();
      Next();
      DropSinkStatement s;
      s.if_exists = Keywords({"if", "exists"});
      SLUICE_ASSIGN_OR_RETURN(s.name, Identifier());
      SLUICE_RETURN_NOT_OK(ExpectEnd());
      return std::optional<SinkStatement>(std::move(s));
    }
    if (Peek().IsKeyword("refresh") && Peek(1).IsKeyword("sink")) {
      Next();
      Next();
      RefreshSinkStatement s;
      SLUICE_ASSIGN_OR_RETURN(s.name, Identifier());
      SLUICE_RETURN_NOT_OK(ExpectEnd());
      return std::optional<SinkStatement>(std::move(s));
    }
    if (Peek().IsKeyword("show") && Peek(1).IsKeyword("sinks")) {
      Next();
      Next();
      SLUICE_RETURN_NOT_OK(ExpectEnd());
      return std::optional<SinkStatement>(ShowSinksStatement{});
    }
    return std::optional<SinkStatement>();
  }

 private:
  template <typename T>
  static Result<std::optional<SinkStatement>> Wrap(Result<T> r) {
    if (!r.ok()) return r.status();
    return std::optional<SinkStatement>(SinkStatement(std::move(r).ValueOrDie()));
  }

  // Spark's property list: ( key [=] value [, ...] ); a key is a string or a dotted identifier,
  // a value a string, a number, true / false, or Databricks' secret('scope', 'key'), kept as its
  // text (common/secret_reference.h: resolved when a flow into the sink starts).
  Result<Properties> OptionList() {
    SLUICE_RETURN_NOT_OK(ExpectSymbol("("));
    Properties options;
    std::set<std::string> seen;
    do {
      std::string key;
      if (Peek().kind == TokenKind::kString) {
        key = Next().text;
      } else {
        SLUICE_ASSIGN_OR_RETURN(key, Identifier());
        while (Symbol(".")) {
          SLUICE_ASSIGN_OR_RETURN(std::string part, Identifier());
          key += "." + part;
        }
      }
      Symbol("=");
      if (!seen.insert(AsciiLower(key)).second) {
        return Status::InvalidArgument("option '" + key + "' is given twice in OPTIONS (...)");
      }
      if (Peek().IsKeyword("secret") && Peek(1).IsSymbol("(")) {
        const size_t begin = Peek().begin;
        while (!AtEnd() && !Peek().IsSymbol(")")) Next();
        const size_t end = Peek().end;
        SLUICE_RETURN_NOT_OK(ExpectSymbol(")"));
        options[key] = std::string(sql_.substr(begin, end - begin));
        continue;  // the do-while's condition: ',' or the end of the list
      }
      const Token& v = Peek();
      if (v.kind != TokenKind::kString && v.kind != TokenKind::kNumber && !v.IsKeyword("true") &&
          !v.IsKeyword("false")) {
        return Error("a value (a string, a number, true or false) for option '" + key + "'");
      }
      options[key] = v.kind == TokenKind::kWord ? AsciiLower(Next().text) : Next().text;
    } while (Symbol(","));
    SLUICE_RETURN_NOT_OK(ExpectSymbol(")"));
    return options;
  }

  Result<CreateSinkStatement> ParseCreate(bool or_replace) {
    CreateSinkStatement s;
    s.or_replace = or_replace;
    SLUICE_ASSIGN_OR_RETURN(s.name, Identifier());
    SLUICE_RETURN_NOT_OK(ExpectKeyword("using"));
    SLUICE_ASSIGN_OR_RETURN(std::string format, Identifier());
    s.format = AsciiLower(format);
    if (Keyword("options")) {
      SLUICE_ASSIGN_OR_RETURN(s.options, OptionList());
    }
    if (Keyword("trigger")) {
      SLUICE_ASSIGN_OR_RETURN(stream::Trigger t, ParseTriggerClause(*this));
      s.trigger = t;
    }
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return s;
  }
};

}  // namespace

Result<std::optional<SinkStatement>> ParseSinkStatement(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens,
                          dialect::Tokenize(sql, dialect::Lexing::kSpark));
  if (tokens.empty()) return std::optional<SinkStatement>();
  return Parser(sql, std::move(tokens)).Parse();
}

}  // namespace sluice::sql
