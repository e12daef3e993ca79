#include "sql/pipeline_statement_parser.h"

#include <utility>

#include "dialect/tokenizer.h"
#include "plan/token_cursor.h"

namespace sluice::sql {
namespace {

using dialect::Token;
using dialect::TokenKind;

class Parser : private plan::TokenCursor {
 public:
  Parser(std::string_view sql, std::vector<Token> tokens) : TokenCursor(sql, std::move(tokens)) {}

  Result<std::optional<CreateMaterializedViewStatement>> Parse() {
    CreateMaterializedViewStatement s;
    if (!Keyword("create")) return std::optional<CreateMaterializedViewStatement>();
    if (Keywords({"or", "refresh"})) s.or_refresh = true;
    if (!Keywords({"materialized", "view"}))
      return std::optional<CreateMaterializedViewStatement>();
    SLUICE_ASSIGN_OR_RETURN(s.name, Identifier());
    if (Peek().IsSymbol("(")) {
      const size_t at = Peek().begin;
      SLUICE_ASSIGN_OR_RETURN(ColumnListParts parts, ParseColumnList(*this, sql_));
      if (!parts.columns_text.empty()) {
        return Status::NotSupported(
            "column definitions on a materialized view are not supported yet (at " +
            dialect::DescribePosition(sql_, at) +
            "): the columns are those of its query; rename or cast them there (expectations, "
            "CONSTRAINT name EXPECT (...), are accepted)");
      }
      s.expectations = std::move(parts.expectations);
    }
    for (;;) {
      if (Keyword("comment")) {
        if (Peek().kind != TokenKind::kString) return Error("a comment string");
        Next();
      } else if (Keywords({"partitioned", "by"})) {
        SLUICE_RETURN_NOT_OK(ExpectSymbol("("));
        do {
          SLUICE_ASSIGN_OR_RETURN(std::string col, Identifier());
          s.partitioned_by.push_back(std::move(col));
        } while (Symbol(","));
        SLUICE_RETURN_NOT_OK(ExpectSymbol(")"));
      } else if (Keyword("tblproperties")) {
        SLUICE_ASSIGN_OR_RETURN(s.properties_text, ParenthesizedText());
      } else {
        break;
      }
    }
    SLUICE_RETURN_NOT_OK(ExpectKeyword("as"));
    if (!Peek().IsKeyword("select") && !Peek().IsKeyword("with") && !Peek().IsKeyword("from") &&
        !Peek().IsSymbol("(")) {
      return Error("a query after AS");
    }
    const size_t begin = Peek().begin;
    size_t end = begin;
    while (!AtEnd()) end = Next().end;
    s.query = std::string(sql_.substr(begin, end - begin));
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return std::optional<CreateMaterializedViewStatement>(std::move(s));
  }

 private:
  // The text of the balanced group at the current '(' (inclusive).
  Result<std::string> ParenthesizedText() {
    if (!Peek().IsSymbol("(")) return Error("'('");
    const size_t begin = Peek().begin;
    int depth = 0;
    for (;;) {
      const Token& t = Next();
      if (t.kind == TokenKind::kEnd) return Error("')'");
      if (t.IsSymbol("(")) ++depth;
      if (t.IsSymbol(")") && --depth == 0) return std::string(sql_.substr(begin, t.end - begin));
    }
  }
};

}  // namespace

Result<std::optional<CreateMaterializedViewStatement>> ParseMaterializedView(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens,
                          dialect::Tokenize(sql, dialect::Lexing::kSpark));
  return Parser(sql, std::move(tokens)).Parse();
}

std::string MaterializedViewRefreshSql(const CreateMaterializedViewStatement& mv) {
  std::string out = "CREATE OR REPLACE TABLE " + mv.name;
  if (!mv.partitioned_by.empty()) {
    out += " PARTITIONED BY (";
    for (size_t i = 0; i < mv.partitioned_by.size(); ++i) {
      out += (i ? ", " : "") + mv.partitioned_by[i];
    }
    out += ")";
  }
  if (!mv.properties_text.empty()) out += " TBLPROPERTIES " + mv.properties_text;
  return out + " AS " + QueryKeepingPassingRows(mv.query, mv.expectations);
}

}  // namespace sluice::sql
