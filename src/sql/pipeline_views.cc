#include "sql/pipeline_views.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "dialect/token_edits.h"
#include "dialect/tokenizer.h"
#include "plan/token_cursor.h"
#include "sql/pipeline_references.h"
#include "sql/table_catalog.h"

namespace sluice::sql {
namespace {

using dialect::Token;
using dialect::TokenKind;

using dialect::IsName;

// Words that may follow a relation and are not its alias.
bool EndsRelation(const Token& t) {
  if (t.kind != TokenKind::kWord) return !IsName(t);
  for (const char* k :
       {"where",      "group",  "order",       "having",  "limit",   "join",  "inner",  "left",
        "right",      "full",   "cross",       "on",      "using",   "union", "except", "intersect",
        "minus",      "window", "qualify",     "natural", "lateral", "semi",  "anti",   "cluster",
        "distribute", "sort",   "tablesample", "offset",  "with",    "pivot", "unpivot"}) {
    if (t.IsKeyword(k)) return true;
  }
  return false;
}

class Parser : private plan::TokenCursor {
 public:
  Parser(std::string_view sql, std::vector<Token> tokens) : TokenCursor(sql, std::move(tokens)) {}

  Result<std::optional<ViewDefinition>> Parse() {
    if (!Keyword("create")) return std::optional<ViewDefinition>();
    Keywords({"or", "replace"});
    if (!Keyword("temporary")) Keyword("temp");
    if (!Keyword("view")) return std::optional<ViewDefinition>();
    Keywords({"if", "not", "exists"});
    ViewDefinition v;
    SLUICE_ASSIGN_OR_RETURN(v.name, Identifier());
    if (Peek().IsSymbol("(")) {
      return Status::NotSupported(
          "a column list on a view is not supported yet (at " +
          dialect::DescribePosition(sql_, Peek().begin) +
          "): name the columns in its query; expectations go on the streaming table or "
          "materialized view that reads it");
    }
    while (Keyword("comment")) {
      if (Peek().kind != TokenKind::kString) return Error("a comment string");
      Next();
    }
    SLUICE_RETURN_NOT_OK(ExpectKeyword("as"));
    if (!Peek().IsKeyword("select") && !Peek().IsKeyword("with") && !Peek().IsKeyword("from") &&
        !Peek().IsSymbol("(")) {
      return Error("a query after AS");
    }
    const size_t begin = Peek().begin;
    size_t end = begin;
    while (!AtEnd()) {
      if (Peek().IsKeyword("stream")) v.streaming = true;
      end = Next().end;
    }
    v.query = std::string(sql_.substr(begin, end - begin));
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return std::optional<ViewDefinition>(std::move(v));
  }
};

}  // namespace

Result<std::optional<ViewDefinition>> ParseView(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens,
                          dialect::Tokenize(sql, dialect::Lexing::kSpark));
  return Parser(sql, std::move(tokens)).Parse();
}

Result<std::string> InlineViews(std::string_view sql,
                                const std::map<std::string, ViewDefinition>& views) {
  if (views.empty()) return std::string(sql);
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens,
                          dialect::Tokenize(sql, dialect::Lexing::kSpark));
  auto at = [&tokens](size_t k) -> const Token& { return tokens[std::min(k, tokens.size() - 1)]; };
  std::string out;
  size_t copied = 0;
  SubqueryParentheses parens;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (parens.Step(t, at(i + 1))) continue;
    // The reference: [STREAM] name | STREAM ( name ), after FROM or JOIN (or a ',' of a FROM
    // list); [first, last] are its tokens and `name_at` the name's.
    size_t first = i, name_at = i, last = i;
    bool as_stream = false;
    if (t.IsKeyword("stream") && at(i + 1).IsSymbol("(") && IsName(at(i + 2)) &&
        at(i + 3).IsSymbol(")")) {
      as_stream = true;
      name_at = i + 2;
      last = i + 3;
    } else if (t.IsKeyword("stream") && IsName(at(i + 1)) && !at(i + 2).IsSymbol("(") &&
               !at(i + 2).IsSymbol(".")) {
      as_stream = true;
      name_at = i + 1;
      last = i + 1;
    } else if (IsName(t) && i > 0 &&
               (tokens[i - 1].IsKeyword("from") || tokens[i - 1].IsKeyword("join") ||
                tokens[i - 1].IsSymbol(",")) &&
               !at(i + 1).IsSymbol("(") && !at(i + 1).IsSymbol(".") &&
               !(i > 1 && tokens[i - 2].IsSymbol(".")) && parens.AtQueryLevel()) {
      name_at = i;
    } else {
      continue;
    }
    auto view = views.find(NormalizeTableName(tokens[name_at].text));
    if (view == views.end()) continue;
    // A ',' only separates relations inside a FROM list: require that the reference is followed
    // by what can follow a relation, as a column list's ',' would not be.
    if (!as_stream && tokens[i - 1].IsSymbol(",")) {
      // Walk back to the nearest FROM / SELECT at this depth.
      int depth = 0;
      bool in_from = false;
      for (size_t k = i - 1; k-- > 0;) {
        if (tokens[k].IsSymbol(")")) ++depth;
        if (tokens[k].IsSymbol("(")) {
          if (depth == 0) break;
          --depth;
        }
        if (depth == 0 && tokens[k].IsKeyword("from")) {
          in_from = true;
          break;
        }
        if (depth == 0 && (tokens[k].IsKeyword("select") || tokens[k].IsKeyword("where") ||
                           tokens[k].IsKeyword("by") || tokens[k].IsKeyword("on"))) {
          break;
        }
      }
      if (!in_from) continue;
    }
    if (as_stream && !view->second.streaming) {
      return Status::InvalidArgument(
          "view '" + view->second.name + "' is read as a STREAM (at " +
          dialect::DescribePosition(sql, t.begin) +
          "), but its query reads no STREAM: read it without STREAM, or make its query read a "
          "STREAM");
    }
    std::string query = view->second.query;
    std::replace(query.begin(), query.end(), '\n', ' ');
    std::replace(query.begin(), query.end(), '\r', ' ');
    out.append(sql.substr(copied, tokens[first].begin - copied));
    out += "(" + query + ")";
    if (EndsRelation(at(last + 1))) {
      const Token& n = tokens[name_at];
      out += " AS " + std::string(sql.substr(n.begin, n.end - n.begin));
    }
    copied = tokens[last].end;
    i = last;
  }
  out.append(sql.substr(copied));
  return out;
}

}  // namespace sluice::sql
