#include "sql/streaming_statement_parser.h"

#include <cctype>
#include <utility>
#include <vector>

#include "common/interval.h"
#include "dialect/tokenizer.h"
#include "plan/token_cursor.h"
#include "sql/pipeline_expectations.h"
#include "sql/table_statement_parser.h"

namespace sluice::sql {
namespace {

using dialect::DescribePosition;
using dialect::Token;
using dialect::Tokenize;
using dialect::TokenKind;

class Parser : private plan::TokenCursor {
 public:
  Parser(std::string_view sql, std::vector<Token> tokens) : TokenCursor(sql, std::move(tokens)) {}

  Result<std::optional<StreamingStatement>> Parse() {
    if (Peek().IsKeyword("create")) {
      size_t k = 1;
      bool or_refresh = false;
      if (Peek(1).IsKeyword("or") && Peek(2).IsKeyword("refresh")) {
        or_refresh = true;
        k = 3;
      }
      if (Peek(k).IsKeyword("streaming") && Peek(k + 1).IsKeyword("table")) {
        for (size_t i = 0; i < k + 2; ++i) Next();
        return Wrap(ParseCreateStreamingTable(or_refresh));
      }
      if (!or_refresh && Peek(1).IsKeyword("flow")) {
        Next();
        Next();
        return Wrap(ParseCreateFlow());
      }
      return std::optional<StreamingStatement>();
    }
    if (Peek().IsKeyword("refresh") && Peek(1).IsKeyword("streaming") &&
        Peek(2).IsKeyword("table")) {
      Next();
      Next();
      Next();
      RefreshStreamingTableStatement s;
      SLUICE_ASSIGN_OR_RETURN(s.name, Identifier());
      SLUICE_RETURN_NOT_OK(ExpectEnd());
      return std::optional<StreamingStatement>(std::move(s));
    }
    if (Peek().IsKeyword("show") && Peek(1).IsKeyword("streaming") && Peek(2).IsKeyword("tables")) {
      Next();
      Next();
      Next();
      SLUICE_RETURN_NOT_OK(ExpectEnd());
      return std::optional<StreamingStatement>(ShowStreamingTablesStatement{});
    }
    return std::optional<StreamingStatement>();
  }

 private:
  template <typename T>
  static Result<std::optional<StreamingStatement>> Wrap(Result<T> r) {
    if (!r.ok()) return r.status();
    return std::optional<StreamingStatement>(StreamingStatement(std::move(r).ValueOrDie()));
  }

  // The text of a balanced parenthesized group starting at the current '(' (inclusive).
  Result<std::string> ParenthesizedText() {
    if (!Peek().IsSymbol("(")) return Error("'('");
    size_t begin = Peek().begin;
    int depth = 0;
    do {
      const Token& t = Next();
      if (t.kind == TokenKind::kEnd) return Error("')'");
      if (t.IsSymbol("(")) ++depth;
      if (t.IsSymbol(")")) --depth;
      if (depth == 0) return std::string(sql_.substr(begin, t.end - begin));
    } while (true);
  }
  // The rest of the statement, without a trailing ';'.
  std::string Rest() {
    size_t begin = Peek().begin;
    size_t end = begin;
    while (Peek().kind != TokenKind::kEnd) {
      if (Peek().IsSymbol(";") && Peek(1).kind == TokenKind::kEnd) break;
      end = Next().end;
    }
    return std::string(sql_.substr(begin, end - begin));
  }

  Result<std::string> StringLiteral(const std::string& what) {
    if (Peek().kind != TokenKind::kString) return Error(what);
    return Next().text;
  }

  Result<CreateStreamingTableStatement> ParseCreateStreamingTable(bool or_refresh) {
    CreateStreamingTableStatement s;
    s.or_refresh = or_refresh;
    SLUICE_ASSIGN_OR_RETURN(s.name, Identifier());
    // Column definitions and TBLPROPERTIES are parsed by the table statement parser, from a
    // CREATE TABLE statement made of their text.
    std::string columns_text, properties_text;
    bool had_column_list = false;
    if (Peek().IsSymbol("(")) {
      // Column definitions and expectations (CONSTRAINT name EXPECT ..., pipeline_expectations.h).
      SLUICE_ASSIGN_OR_RETURN(ColumnListParts parts, ParseColumnList(*this, sql_));
      columns_text = std::move(parts.columns_text);
      s.expectations = std::move(parts.expectations);
      had_column_list = true;
    }
    for (;;) {
      if (Keywords({"partitioned", "by"})) {
        if (!Peek().IsSymbol("(")) return Error("'('");
        Next();
        do {
          SLUICE_ASSIGN_OR_RETURN(std::string col, Identifier());
          s.partitioned_by.push_back(std::move(col));
        } while (Peek().IsSymbol(",") && (Next(), true));
        if (!Peek().IsSymbol(")")) return Error("')'");
        Next();
      } else if (Keyword("tblproperties")) {
        SLUICE_ASSIGN_OR_RETURN(properties_text, ParenthesizedText());
      } else if (Keyword("comment")) {
        SLUICE_RETURN_NOT_OK(StringLiteral("a comment string").status());
      } else if (Keywords({"output", "mode"})) {
        if (Keyword("append")) {
          s.output_mode = sinks::OutputMode::kAppend;
        } else if (Keyword("update")) {
          s.output_mode = sinks::OutputMode::kUpdate;
        } else if (Keyword("complete")) {
          s.output_mode = sinks::OutputMode::kComplete;
        } else {
          return Error("APPEND, UPDATE or COMPLETE");
        }
      } else if (Keyword("trigger")) {
        SLUICE_ASSIGN_OR_RETURN(stream::Trigger t, ParseTriggerClause(*this));
        s.trigger = t;
      } else if (Keywords({"schedule", "every"})) {
        if (Peek().kind != TokenKind::kNumber) return Error("a number");
        std::string text = Next().text;
        SLUICE_ASSIGN_OR_RETURN(std::string unit, Identifier());
        SLUICE_ASSIGN_OR_RETURN(Duration d, ParseDuration(text + " " + unit));
        if (d.millis() <= 0) return Status::InvalidArgument("SCHEDULE EVERY needs a positive time");
        s.schedule_every_ms = d.millis();
      } else {
        break;
      }
    }
    if (Keyword("as")) {
      std::string q = Rest();
      if (q.empty()) return Error("a query after AS");
      s.query = std::move(q);
    } else if (!had_column_list) {
      return Error("AS <query> or a column list");
    }
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    if (!s.query && columns_text.empty()) return Error("AS <query> or a column list");
    if (!columns_text.empty() || !properties_text.empty()) {
      std::string create =
          "CREATE TABLE __t " + (columns_text.empty() ? "(__x INT)" : columns_text);
      if (!properties_text.empty()) create += " TBLPROPERTIES " + properties_text;
      SLUICE_ASSIGN_OR_RETURN(std::optional<TableStatement> parsed, ParseTableStatement(create));
      const auto* ct = parsed ? std::get_if<CreateTableStatement>(&*parsed) : nullptr;
      if (ct == nullptr) return Status::InvalidArgument("bad column list or TBLPROPERTIES");
      if (!columns_text.empty()) s.columns = ct->columns;
      s.properties = ct->properties;
    }
    return s;
  }

  Result<CreateFlowStatement> ParseCreateFlow() {
    CreateFlowStatement s;
    SLUICE_ASSIGN_OR_RETURN(s.name, Identifier());
    SLUICE_RETURN_NOT_OK(ExpectKeyword("as"));
    if (Keywords({"auto", "cdc"})) return ParseAutoCdc(std::move(s));
    SLUICE_RETURN_NOT_OK(ExpectKeyword("insert"));
    SLUICE_RETURN_NOT_OK(ExpectKeyword("into"));
    SLUICE_ASSIGN_OR_RETURN(s.target, Identifier());
    Keywords({"by", "name"});  // appends always match columns by name
    if (!Peek().IsKeyword("select") && !Peek().IsKeyword("with") && !Peek().IsKeyword("from") &&
        !Peek().IsSymbol("(")) {
      return Error("a query");
    }
    s.query = Rest();
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return s;
  }

  // The text of the tokens up to (not including) one of `stops` at parenthesis depth 0, or the
  // end of the statement; empty when there are none.
  std::string TextUntil(std::initializer_list<std::string_view> stops) {
    size_t begin = Peek().begin;
    size_t end = begin;
    int depth = 0;
    while (Peek().kind != TokenKind::kEnd) {
      if (Peek().IsSymbol(";") && Peek(1).kind == TokenKind::kEnd) break;
      if (depth == 0) {
        bool stop = false;
        for (std::string_view k : stops) stop = stop || Peek().IsKeyword(k);
        if (stop) break;
      }
      if (Peek().IsSymbol("(")) ++depth;
      if (Peek().IsSymbol(")") && depth > 0) --depth;
      end = Next().end;
    }
    return std::string(sql_.substr(begin, end - begin));
  }

  // '(' identifier [, identifier]* ')'
  Result<std::vector<std::string>> IdentifierList() {
    SLUICE_RETURN_NOT_OK(ExpectSymbol("("));
    std::vector<std::string> out;
    do {
      SLUICE_ASSIGN_OR_RETURN(std::string id, Identifier());
      out.push_back(std::move(id));
    } while (Symbol(","));
    SLUICE_RETURN_NOT_OK(ExpectSymbol(")"));
    return out;
  }

  // After AUTO CDC: INTO target FROM STREAM src KEYS (...) SEQUENCE BY col
  // [APPLY AS DELETE WHEN cond] [COLUMNS * [EXCEPT (...)] | COLUMNS (...)]
  // [STORED AS SCD TYPE {1 | 2}].
  Result<CreateFlowStatement> ParseAutoCdc(CreateFlowStatement s) {
    AutoCdcSpec spec;
    SLUICE_RETURN_NOT_OK(ExpectKeyword("into"));
    SLUICE_ASSIGN_OR_RETURN(s.target, Identifier());
    SLUICE_RETURN_NOT_OK(ExpectKeyword("from"));
    SLUICE_RETURN_NOT_OK(ExpectKeyword("stream"));
    std::string source = TextUntil({"keys"});
    if (source.empty()) return Error("the source after FROM STREAM");
    s.query = "SELECT * FROM STREAM " + source;
    SLUICE_RETURN_NOT_OK(ExpectKeyword("keys"));
    SLUICE_ASSIGN_OR_RETURN(spec.keys, IdentifierList());
    SLUICE_RETURN_NOT_OK(ExpectKeyword("sequence"));
    SLUICE_RETURN_NOT_OK(ExpectKeyword("by"));
    SLUICE_ASSIGN_OR_RETURN(spec.sequence_by, Identifier());
    if (Keywords({"apply", "as", "delete", "when"})) {
      std::string cond = TextUntil({"columns", "stored"});
      if (cond.empty()) return Error("a condition after APPLY AS DELETE WHEN");
      spec.delete_when = std::move(cond);
    }
    if (Keyword("columns")) {
      if (Symbol("*")) {
        if (Keyword("except")) {
          spec.columns_mode = AutoCdcSpec::Columns::kExcept;
          SLUICE_ASSIGN_OR_RETURN(spec.columns, IdentifierList());
        }
      } else if (Peek().IsSymbol("(")) {
        spec.columns_mode = AutoCdcSpec::Columns::kList;
        SLUICE_ASSIGN_OR_RETURN(spec.columns, IdentifierList());
      } else {
        return Error("'*', '* EXCEPT (...)' or '(columns)' after COLUMNS");
      }
    }
    if (Keywords({"stored", "as", "scd", "type"})) {
      if (Peek().kind != TokenKind::kNumber || (Peek().text != "1" && Peek().text != "2")) {
        return Error("1 or 2 after STORED AS SCD TYPE");
      }
      spec.scd_type = Next().text == "1" ? 1 : 2;
    }
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    s.auto_cdc = std::move(spec);
    return s;
  }
};

}  // namespace

Result<stream::Trigger> ParseTriggerClause(plan::TokenCursor& c) {
  if (c.Keywords({"available", "now"})) return stream::Trigger::AvailableNow();
  if (c.Keyword("once")) return stream::Trigger::Once();
  if (c.Keywords({"processing", "time"})) {
    if (c.Peek().kind != TokenKind::kString) return c.Error("an interval string");
    return stream::Trigger::ProcessingTime(c.Next().text);
  }
  if (c.Keyword("continuous")) {
    std::string interval = "1 second";
    if (c.Peek().kind == TokenKind::kString) interval = c.Next().text;
    return stream::Trigger::Continuous(interval);
  }
  return c.Error("AVAILABLE NOW, PROCESSING TIME 'interval', ONCE or CONTINUOUS 'interval'");
}

Result<std::optional<StreamingStatement>> ParseStreamingStatement(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(sql));
  if (tokens.empty()) return std::optional<StreamingStatement>();
  return Parser(sql, std::move(tokens)).Parse();
}

}  // namespace sluice::sql
