#include "sql/table_statement_parser.h"

#include <cstdlib>
#include <initializer_list>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "dialect/tokenizer.h"
#include "plan/token_cursor.h"

namespace sluice::sql {
namespace {

using dialect::DescribePosition;
using dialect::Token;

// "t" or "delta.`/path`", for messages.
std::string DisplayTableName(const TableName& t) {
  return t.is_path ? "delta.`" + t.name + "`" : t.name;
}
using dialect::Tokenize;
using dialect::TokenKind;

class Parser : private plan::TokenCursor {
 public:
  Parser(std::string_view sql, std::vector<Token> tokens) : TokenCursor(sql, std::move(tokens)) {}

  Result<std::optional<TableStatement>> Parse() {
    if (Peek().IsKeyword("create")) return ParseCreate();
    if (Peek().IsKeyword("replace") && Peek(1).IsKeyword("table")) return ParseCreate();
    if (Peek().IsKeyword("insert")) return Wrap(ParseInsert());
    if (Peek().IsKeyword("update")) return Wrap(ParseUpdate());
    if (Peek().IsKeyword("delete")) return Wrap(ParseDelete());
    if (Peek().IsKeyword("merge")) return Wrap(ParseMerge());
    if (Peek().IsKeyword("alter") && Peek(1).IsKeyword("table")) return ParseAlter();
    if (Peek().IsKeyword("describe") || Peek().IsKeyword("desc")) return ParseDescribe();
    if (Peek().IsKeyword("vacuum")) return Wrap(ParseVacuum());
    if (Peek().IsKeyword("optimize")) return Wrap(ParseOptimize());
    if (Peek().IsKeyword("reorg") && Peek(1).IsKeyword("table")) return Wrap(ParseReorg());
    if (Peek().IsKeyword("restore")) return Wrap(ParseRestore());
    if (Peek().IsKeyword("drop") && Peek(1).IsKeyword("table")) return Wrap(ParseDrop());
    if (Peek().IsKeyword("show") && Peek(1).IsKeyword("tables")) return Wrap(ParseShowTables());
    if (Peek().IsKeyword("show") && Peek(1).IsKeyword("tblproperties")) {
      return Wrap(ParseShowTblProperties());
    }
    if (Peek().IsKeyword("show") && Peek(1).IsKeyword("create") && Peek(2).IsKeyword("table")) {
      return Wrap(ParseShowCreateTable());
    }
    return std::optional<TableStatement>();
  }

 private:
  template <typename T>
  static Result<std::optional<TableStatement>> Wrap(Result<T> r) {
    if (!r.ok()) return r.status();
    return std::optional<TableStatement>(TableStatement(std::move(r).ValueOrDie()));
  }

  // name | schema.name | delta.`path` | "quoted"
  Result<TableName> ParseTableName() {
    if (Peek().IsKeyword("delta") && Peek(1).IsSymbol(".") &&
        Peek(2).kind == TokenKind::kBacktick) {
      Next();
      Next();
      TableName t{Next().text, true};
      if (t.name.empty()) return Status::InvalidArgument("delta.`` needs a path");
      return t;
    }
    std::vector<std::string> parts;
    SLUICE_ASSIGN_OR_RETURN(std::string first, Identifier());
    parts.push_back(std::move(first));
    while (Peek().IsSymbol(".")) {
      Next();
      SLUICE_ASSIGN_OR_RETURN(std::string part, Identifier());
      parts.push_back(std::move(part));
    }
    // Spark's one catalog and schema name the warehouse's tables: spark_catalog.default.t and
    // default.t are t (as SHOW CREATE TABLE and DESCRIBE EXTENDED name them).
    auto is = [](const std::string& a, const char* b) { return AsciiLower(a) == b; };
    if (parts.size() == 3 && is(parts[0], "spark_catalog") && is(parts[1], "default")) {
      parts.erase(parts.begin(), parts.begin() + 2);
    } else if (parts.size() == 2 && is(parts[0], "default")) {
      parts.erase(parts.begin());
    }
    std::string name = parts[0];
    for (size_t i = 1; i < parts.size(); ++i) name += "." + parts[i];
    return TableName{name, false};
  }

  // Words that end an optional alias.
  static bool IsClauseKeyword(const Token& t) {
    for (const char* k :
         {"set",     "where",     "using",       "on",       "when",          "values",
          "select",  "by",        "partitioned", "location", "tblproperties", "as",
          "retain",  "dry",       "with",        "from",     "limit",         "to",
          "version", "timestamp", "zorder"}) {
      if (t.IsKeyword(k)) return true;
    }
    return false;
  }

  std::optional<std::string> OptionalAlias() {
    if (Keyword("as")) {
      Result<std::string> a = Identifier();
      return a.ok() ? std::optional<std::string>(*a) : std::nullopt;
    }
    const Token& t = Peek();
    if ((t.kind == TokenKind::kWord && !IsClauseKeyword(t)) || t.kind == TokenKind::kQuotedIdent) {
      Next();
      return t.text;
    }
    return std::nullopt;
  }

  // Source text from the current token up to (not including) the first token at parenthesis
  // depth 0 that is a stop keyword/symbol, or the end. Empty text is an error naming `what`.
  // The text up to a stop keyword or symbol outside brackets (or an unmatched closing one).
  // With `angle_brackets` (a type: MAP<STRING, INT>, STRUCT<a: INT, b: STRING>) '<' and '>'
  // nest too; elsewhere they are comparisons.
  Result<std::string> TextUntil(std::initializer_list<std::string_view> stop_keywords,
                                std::initializer_list<std::string_view> stop_symbols,
                                const std::string& what, bool angle_brackets = false) {
    size_t start = Peek().begin;
    size_t end = start;
    int depth = 0;
    while (!AtEnd()) {
      const Token& t = Peek();
      if (depth == 0) {
        bool stop = false;
        for (auto k : stop_keywords) stop = stop || t.IsKeyword(k);
        for (auto s : stop_symbols) stop = stop || t.IsSymbol(s);
        if (stop) break;
      }
      // CASE ... END nests like parentheses: its WHEN must not end a MERGE clause.
      if (t.IsSymbol("(") || t.IsSymbol("[") || t.IsKeyword("case") ||
          (angle_brackets && t.IsSymbol("<"))) {
        ++depth;
      }
      const int closes = angle_brackets && t.IsSymbol(">>") ? 2 : 1;  // ARRAY<ARRAY<INT>>
      if (t.IsSymbol(")") || t.IsSymbol("]") || (t.IsKeyword("end") && depth > 0) ||
          (angle_brackets && (t.IsSymbol(">") || t.IsSymbol(">>")))) {
        if (depth < closes) break;
        depth -= closes;
      }
      end = t.end;
      Next();
    }
    if (end == start) return Error(what);
    return std::string(sql_.substr(start, end - start));
  }

  Result<std::vector<std::string>> NameList() {
    SLUICE_RETURN_NOT_OK(ExpectSymbol("("));
    std::vector<std::string> names;
    do {
      SLUICE_ASSIGN_OR_RETURN(std::string n, Identifier());
      names.push_back(std::move(n));
    } while (Symbol(","));
    SLUICE_RETURN_NOT_OK(ExpectSymbol(")"));
    return names;
  }

  Result<std::string> StringLiteral(const std::string& what) {
    if (Peek().kind != TokenKind::kString) return Error(what);
    return Next().text;
  }

  Result<std::vector<ColumnDefinition>> ColumnDefinitions() {
    SLUICE_RETURN_NOT_OK(ExpectSymbol("("));
    std::vector<ColumnDefinition> columns;
    do {
      ColumnDefinition c;
      SLUICE_ASSIGN_OR_RETURN(c.name, Identifier());
      SLUICE_ASSIGN_OR_RETURN(c.type_sql,
                              TextUntil({"not", "null", "comment"}, {","}, "a type", true));
      for (;;) {
        if (Keywords({"not", "null"})) {
          c.not_null = true;
        } else if (Keyword("null")) {
          c.not_null = false;
        } else if (Keyword("comment")) {
          SLUICE_ASSIGN_OR_RETURN(std::string comment, StringLiteral("a comment string"));
          c.comment = std::move(comment);
        } else {
          break;
        }
      }
      columns.push_back(std::move(c));
    } while (Symbol(","));
    SLUICE_RETURN_NOT_OK(ExpectSymbol(")"));
    return columns;
  }

  // ('key' = 'value', key.part = 10, ...)
  Result<Properties> PropertyList() {
    SLUICE_RETURN_NOT_OK(ExpectSymbol("("));
    Properties props;
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
      SLUICE_RETURN_NOT_OK(ExpectSymbol("="));
      const Token& v = Peek();
      if (v.kind == TokenKind::kString || v.kind == TokenKind::kNumber ||
          v.kind == TokenKind::kWord) {
        props[key] = Next().text;
      } else {
        return Error("a property value");
      }
    } while (Symbol(","));
    SLUICE_RETURN_NOT_OK(ExpectSymbol(")"));
    return props;
  }

  // The rest of the statement as text (a query), without a trailing ';'.
  Result<std::string> RestAsQuery(const std::string& what) { return TextUntil({}, {";"}, what); }

  Result<std::optional<TableStatement>> ParseCreate() {
    CreateTableStatement s;
    if (Peek().IsKeyword("replace")) {  // REPLACE TABLE
      s.or_replace = true;
      s.replace_only = true;
    }
    Next();  // CREATE or REPLACE
    if (!s.replace_only && Keywords({"or", "replace"})) s.or_replace = true;
    if (!Peek().IsKeyword("table"))
      return std::optional<TableStatement>();  // VIEW, MACRO, TEMP ...
    Next();
    if (!s.replace_only && Peek().IsKeyword("if")) {
      if (s.or_replace) return Error("a table name (OR REPLACE cannot be used with IF NOT EXISTS)");
      SLUICE_RETURN_NOT_OK(ExpectKeyword("if"));
      SLUICE_RETURN_NOT_OK(ExpectKeyword("not"));
      SLUICE_RETURN_NOT_OK(ExpectKeyword("exists"));
      s.if_not_exists = true;
    }
    SLUICE_ASSIGN_OR_RETURN(s.table, ParseTableName());
    if (Peek().IsSymbol("(")) {
      SLUICE_ASSIGN_OR_RETURN(s.columns, ColumnDefinitions());
    }
    for (;;) {
      if (Keywords({"using"})) {
        SLUICE_ASSIGN_OR_RETURN(std::string format, Identifier());
        if (format != "delta" && format != "DELTA" && format != "Delta") {
          return Status::NotSupported("tables are Delta tables: USING " + format +
                                      " is not supported (omit USING or write USING DELTA)");
        }
      } else if (Keywords({"partitioned", "by"})) {
        SLUICE_ASSIGN_OR_RETURN(s.partitioned_by, NameList());
      } else if (Keyword("location")) {
        SLUICE_ASSIGN_OR_RETURN(std::string location, StringLiteral("a location string"));
        s.location = std::move(location);
      } else if (Keyword("comment")) {
        SLUICE_ASSIGN_OR_RETURN(std::string comment, StringLiteral("a comment string"));
        s.comment = std::move(comment);
      } else if (Keyword("tblproperties")) {
        SLUICE_ASSIGN_OR_RETURN(s.properties, PropertyList());
      } else {
        break;
      }
    }
    if (Keyword("as")) {
      SLUICE_ASSIGN_OR_RETURN(std::string q, RestAsQuery("a query after AS"));
      s.as_query = std::move(q);
    } else if (s.columns.empty()) {
      return Error("a column list or AS <query>");
    }
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return std::optional<TableStatement>(std::move(s));
  }

  Result<InsertStatement> ParseInsert() {
    Next();  // INSERT
    InsertStatement s;
    if (Keyword("overwrite")) {
      s.overwrite = true;
    } else {
      SLUICE_RETURN_NOT_OK(ExpectKeyword("into"));
    }
    Keyword("table");
    SLUICE_ASSIGN_OR_RETURN(s.table, ParseTableName());
    if (Keywords({"by", "name"})) s.by_name = true;
    if (Peek().IsSymbol("(") && !Peek(1).IsKeyword("select") && !Peek(1).IsKeyword("with") &&
        !Peek(1).IsKeyword("values")) {
      SLUICE_ASSIGN_OR_RETURN(s.columns, NameList());
    }
    if (!(Peek().IsKeyword("values") || Peek().IsKeyword("select") || Peek().IsKeyword("with") ||
          Peek().IsKeyword("from") || Peek().IsSymbol("(") || Peek().IsKeyword("table"))) {
      return Error("VALUES or a query");
    }
    SLUICE_ASSIGN_OR_RETURN(s.query, RestAsQuery("VALUES or a query"));
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return s;
  }

  Result<std::vector<Assignment>> Assignments(std::initializer_list<std::string_view> stops) {
    std::vector<Assignment> out;
    do {
      Assignment a;
      SLUICE_ASSIGN_OR_RETURN(a.column, Identifier());
      // target.col = ... : keep the last part as the column.
      while (Symbol(".")) {
        SLUICE_ASSIGN_OR_RETURN(a.column, Identifier());
      }
      SLUICE_RETURN_NOT_OK(ExpectSymbol("="));
      SLUICE_ASSIGN_OR_RETURN(a.expression, TextUntil(stops, {","}, "an expression"));
      out.push_back(std::move(a));
    } while (Symbol(","));
    return out;
  }

  Result<UpdateStatement> ParseUpdate() {
    Next();  // UPDATE
    UpdateStatement s;
    SLUICE_ASSIGN_OR_RETURN(s.table, ParseTableName());
    s.alias = OptionalAlias();
    SLUICE_RETURN_NOT_OK(ExpectKeyword("set"));
    SLUICE_ASSIGN_OR_RETURN(s.assignments, Assignments({"where"}));
    if (Keyword("where")) {
      SLUICE_ASSIGN_OR_RETURN(std::string w, RestAsQuery("a condition after WHERE"));
      s.where = std::move(w);
    }
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return s;
  }

  Result<DeleteStatement> ParseDelete() {
    Next();  // DELETE
    SLUICE_RETURN_NOT_OK(ExpectKeyword("from"));
    DeleteStatement s;
    SLUICE_ASSIGN_OR_RETURN(s.table, ParseTableName());
    s.alias = OptionalAlias();
    if (Keyword("where")) {
      SLUICE_ASSIGN_OR_RETURN(std::string w, RestAsQuery("a condition after WHERE"));
      s.where = std::move(w);
    }
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return s;
  }

  Result<MergeStatement> ParseMerge() {
    Next();  // MERGE
    SLUICE_RETURN_NOT_OK(ExpectKeyword("into"));
    MergeStatement s;
    SLUICE_ASSIGN_OR_RETURN(s.target, ParseTableName());
    s.target_alias = OptionalAlias();
    SLUICE_RETURN_NOT_OK(ExpectKeyword("using"));
    if (Peek().IsSymbol("(")) {
      size_t start = Peek().begin;
      Next();
      SLUICE_RETURN_NOT_OK(TextUntil({}, {}, "a query").status());
      size_t end = Peek().end;
      SLUICE_RETURN_NOT_OK(ExpectSymbol(")"));
      s.source = std::string(sql_.substr(start, end - start));
    } else {
      size_t start = Peek().begin;
      SLUICE_RETURN_NOT_OK(ParseTableName().status());
      s.source = std::string(sql_.substr(start, tokens_[pos_ - 1].end - start));
    }
    s.source_alias = OptionalAlias();
    SLUICE_RETURN_NOT_OK(ExpectKeyword("on"));
    SLUICE_ASSIGN_OR_RETURN(s.on, TextUntil({"when"}, {}, "a merge condition after ON"));
    while (Keyword("when")) {
      MergeClause c;
      if (Keyword("matched")) {
        c.match = MergeMatch::kMatched;
      } else if (Keywords({"not", "matched"})) {
        c.match = MergeMatch::kNotMatchedByTarget;
        if (Keywords({"by", "source"})) {
          c.match = MergeMatch::kNotMatchedBySource;
        } else {
          Keywords({"by", "target"});
        }
      } else {
        return Error("MATCHED or NOT MATCHED");
      }
      if (Keyword("and")) {
        SLUICE_ASSIGN_OR_RETURN(std::string cond, TextUntil({"then"}, {}, "a condition"));
        c.condition = std::move(cond);
      }
      SLUICE_RETURN_NOT_OK(ExpectKeyword("then"));
      if (Keyword("update")) {
        SLUICE_RETURN_NOT_OK(ExpectKeyword("set"));
        if (Symbol("*")) {
          c.action = MergeAction::kUpdateStar;
        } else {
          c.action = MergeAction::kUpdate;
          SLUICE_ASSIGN_OR_RETURN(c.assignments, Assignments({"when"}));
        }
      } else if (Keyword("delete")) {
        c.action = MergeAction::kDelete;
      } else if (Keyword("insert")) {
        if (Symbol("*")) {
          c.action = MergeAction::kInsertStar;
        } else {
          c.action = MergeAction::kInsert;
          if (Peek().IsSymbol("(")) {
            SLUICE_ASSIGN_OR_RETURN(c.insert_columns, NameList());
          }
          SLUICE_RETURN_NOT_OK(ExpectKeyword("values"));
          SLUICE_RETURN_NOT_OK(ExpectSymbol("("));
          do {
            SLUICE_ASSIGN_OR_RETURN(std::string v, TextUntil({}, {","}, "a value"));
            c.insert_values.push_back(std::move(v));
          } while (Symbol(","));
          SLUICE_RETURN_NOT_OK(ExpectSymbol(")"));
          if (!c.insert_columns.empty() && c.insert_columns.size() != c.insert_values.size()) {
            return Status::InvalidArgument(
                "MERGE INSERT names " + std::to_string(c.insert_columns.size()) +
                " columns but gives " + std::to_string(c.insert_values.size()) + " values");
          }
        }
      } else {
        return Error("UPDATE, DELETE or INSERT");
      }
      if (c.match == MergeMatch::kNotMatchedByTarget &&
          (c.action != MergeAction::kInsert && c.action != MergeAction::kInsertStar)) {
        return Status::InvalidArgument("WHEN NOT MATCHED [BY TARGET] can only INSERT");
      }
      if (c.match != MergeMatch::kNotMatchedByTarget &&
          (c.action == MergeAction::kInsert || c.action == MergeAction::kInsertStar)) {
        return Status::InvalidArgument("INSERT is only allowed in WHEN NOT MATCHED [BY TARGET]");
      }
      if (c.match == MergeMatch::kNotMatchedBySource && c.action == MergeAction::kUpdateStar) {
        return Status::InvalidArgument("WHEN NOT MATCHED BY SOURCE cannot UPDATE SET *");
      }
      s.clauses.push_back(std::move(c));
    }
    if (s.clauses.empty()) return Error("WHEN");
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return s;
  }

  Result<std::optional<TableStatement>> ParseAlter() {
    Next();  // ALTER
    Next();  // TABLE
    SLUICE_ASSIGN_OR_RETURN(TableName table, ParseTableName());
    if (Keywords({"add", "columns"})) {
      AlterTableAddColumnsStatement s;
      s.table = std::move(table);
      SLUICE_ASSIGN_OR_RETURN(s.columns, ColumnDefinitions());
      SLUICE_RETURN_NOT_OK(ExpectEnd());
      return std::optional<TableStatement>(std::move(s));
    }
    if (Keywords({"add", "column"})) {
      AlterTableAddColumnsStatement s;
      s.table = std::move(table);
      ColumnDefinition c;
      SLUICE_ASSIGN_OR_RETURN(c.name, Identifier());
      SLUICE_ASSIGN_OR_RETURN(c.type_sql, TextUntil({"not", "comment"}, {";"}, "a type", true));
      if (Keywords({"not", "null"})) c.not_null = true;
      s.columns.push_back(std::move(c));
      SLUICE_RETURN_NOT_OK(ExpectEnd());
      return std::optional<TableStatement>(std::move(s));
    }
    if (Keywords({"set", "tblproperties"})) {
      AlterTableSetPropertiesStatement s;
      s.table = std::move(table);
      SLUICE_ASSIGN_OR_RETURN(s.properties, PropertyList());
      SLUICE_RETURN_NOT_OK(ExpectEnd());
      return std::optional<TableStatement>(std::move(s));
    }
    if (Keywords({"rename", "column"})) {
      AlterTableRenameColumnStatement s;
      s.table = std::move(table);
      SLUICE_ASSIGN_OR_RETURN(s.column, ColumnPath());
      SLUICE_RETURN_NOT_OK(ExpectKeyword("to"));
      SLUICE_ASSIGN_OR_RETURN(s.new_name, Identifier());
      SLUICE_RETURN_NOT_OK(ExpectEnd());
      return std::optional<TableStatement>(std::move(s));
    }
    if (Keywords({"drop", "columns"}) || Keywords({"drop", "column"})) {
      AlterTableDropColumnsStatement s;
      s.table = std::move(table);
      s.if_exists = Keywords({"if", "exists"});
      const bool parens = Symbol("(");
      do {
        SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> path, ColumnPath());
        s.columns.push_back(std::move(path));
      } while (Symbol(","));
      if (parens) SLUICE_RETURN_NOT_OK(ExpectSymbol(")"));
      SLUICE_RETURN_NOT_OK(ExpectEnd());
      return std::optional<TableStatement>(std::move(s));
    }
    return Status::NotSupported(
        "ALTER TABLE supports ADD COLUMNS (...), SET TBLPROPERTIES (...), RENAME COLUMN and "
        "DROP COLUMN; other schema changes are not supported at " +
        DescribePosition(sql_, Peek().begin));
  }

  // a or a.b.c (a nested field's path).
  Result<std::vector<std::string>> ColumnPath() {
    std::vector<std::string> path;
    SLUICE_ASSIGN_OR_RETURN(std::string first, Identifier());
    path.push_back(std::move(first));
    while (Symbol(".")) {
      SLUICE_ASSIGN_OR_RETURN(std::string part, Identifier());
      path.push_back(std::move(part));
    }
    return path;
  }

  Result<std::optional<TableStatement>> ParseDescribe() {
    Next();  // DESCRIBE
    DescribeStatement s;
    if (Keyword("history")) {
      s.kind = DescribeStatement::Kind::kHistory;
    } else if (Keyword("detail")) {
      s.kind = DescribeStatement::Kind::kDetail;
    } else {
      Keyword("table");
      // EXTENDED and FORMATTED are one in Spark (a table named so is written in backquotes).
      s.extended = Keyword("extended") || Keyword("formatted");
      // DESCRIBE <query> belongs to the engine.
      if (Peek().IsKeyword("select") || Peek().IsKeyword("with") || Peek().IsKeyword("from") ||
          Peek().IsSymbol("(")) {
        return std::optional<TableStatement>();
      }
    }
    SLUICE_ASSIGN_OR_RETURN(s.table, ParseTableName());
    if (s.kind == DescribeStatement::Kind::kHistory && Keyword("limit")) {
      if (Peek().kind != TokenKind::kNumber) return Error("a number after LIMIT");
      s.limit = std::strtoll(Next().text.c_str(), nullptr, 10);
    }
    if (s.kind == DescribeStatement::Kind::kTable && s.extended && !AtEnd()) {
      return Status::NotSupported(
          "DESCRIBE EXTENDED of a column (Spark's info_name/info_value rows) is not supported: "
          "DESCRIBE EXTENDED " +
          DisplayTableName(s.table) + " shows every column's type and comment");
    }
    if (s.kind == DescribeStatement::Kind::kTable && !AtEnd()) {
      return std::optional<TableStatement>();  // DESCRIBE t WHERE ... etc: leave to the engine
    }
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return std::optional<TableStatement>(std::move(s));
  }

  Result<VacuumStatement> ParseVacuum() {
    Next();  // VACUUM
    VacuumStatement s;
    SLUICE_ASSIGN_OR_RETURN(s.table, ParseTableName());
    if (Keyword("retain")) {
      if (Peek().kind != TokenKind::kNumber) return Error("a number of hours after RETAIN");
      s.retain_hours = std::strtod(Next().text.c_str(), nullptr);
      SLUICE_RETURN_NOT_OK(ExpectKeyword("hours"));
    }
    if (Keywords({"dry", "run"})) s.dry_run = true;
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return s;
  }

  Result<OptimizeStatement> ParseOptimize() {
    Next();  // OPTIMIZE
    OptimizeStatement s;
    SLUICE_ASSIGN_OR_RETURN(s.table, ParseTableName());
    if (Keyword("where")) {
      SLUICE_ASSIGN_OR_RETURN(std::string w, TextUntil({"zorder"}, {";"}, "a partition predicate"));
      s.where = std::move(w);
    }
    if (Peek().IsKeyword("zorder")) {
      return Status::NotSupported(
          "OPTIMIZE ... ZORDER BY is not supported; OPTIMIZE compacts files");
    }
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return s;
  }

  // REORG TABLE t [WHERE partition_predicate] APPLY (PURGE): an OPTIMIZE that rewrites the files
  // with deletion vectors (delta/optimize.h).
  Result<OptimizeStatement> ParseReorg() {
    Next();  // REORG
    Next();  // TABLE
    OptimizeStatement s;
    s.purge = true;
    SLUICE_ASSIGN_OR_RETURN(s.table, ParseTableName());
    if (Keyword("where")) {
      SLUICE_ASSIGN_OR_RETURN(std::string w, TextUntil({"apply"}, {";"}, "a partition predicate"));
      s.where = std::move(w);
    }
    SLUICE_RETURN_NOT_OK(ExpectKeyword("apply"));
    SLUICE_RETURN_NOT_OK(ExpectSymbol("("));
    if (!Peek().IsKeyword("purge")) {
      return Status::NotSupported(
          "REORG TABLE ... APPLY supports only (PURGE) (no UPGRADE UNIFORM: Sluice writes no "
          "Iceberg metadata)");
    }
    Next();  // PURGE
    SLUICE_RETURN_NOT_OK(ExpectSymbol(")"));
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return s;
  }

  Result<RestoreStatement> ParseRestore() {
    Next();  // RESTORE
    Keyword("table");
    RestoreStatement s;
    SLUICE_ASSIGN_OR_RETURN(s.table, ParseTableName());
    Keyword("to");
    if (Keywords({"version", "as", "of"})) {
      if (Peek().kind != TokenKind::kNumber) return Error("a version number");
      s.version = std::strtoll(Next().text.c_str(), nullptr, 10);
    } else if (Keywords({"timestamp", "as", "of"})) {
      SLUICE_ASSIGN_OR_RETURN(std::string ts, StringLiteral("a timestamp string"));
      s.timestamp = std::move(ts);
    } else {
      return Error("VERSION AS OF or TIMESTAMP AS OF");
    }
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return s;
  }

  Result<DropTableStatement> ParseDrop() {
    Next();  // DROP
    Next();  // TABLE
    DropTableStatement s;
    if (Keywords({"if", "exists"})) s.if_exists = true;
    SLUICE_ASSIGN_OR_RETURN(s.table, ParseTableName());
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return s;
  }

  Result<ShowTblPropertiesStatement> ParseShowTblProperties() {
    Next();  // SHOW
    Next();  // TBLPROPERTIES
    ShowTblPropertiesStatement s;
    SLUICE_ASSIGN_OR_RETURN(s.table, ParseTableName());
    if (Peek().IsSymbol("(")) {
      Next();
      // A key is a string or a dotted name (Spark's propertyKey).
      if (Peek().kind == TokenKind::kString) {
        SLUICE_ASSIGN_OR_RETURN(std::string key, StringLiteral("a property key"));
        s.key = std::move(key);
      } else {
        SLUICE_ASSIGN_OR_RETURN(std::string key, Identifier());
        while (Peek().IsSymbol(".")) {
          Next();
          SLUICE_ASSIGN_OR_RETURN(std::string part, Identifier());
          key += "." + part;
        }
        s.key = std::move(key);
      }
      SLUICE_RETURN_NOT_OK(ExpectSymbol(")"));
    }
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return s;
  }

  Result<ShowCreateTableStatement> ParseShowCreateTable() {
    Next();  // SHOW
    Next();  // CREATE
    Next();  // TABLE
    ShowCreateTableStatement s;
    SLUICE_ASSIGN_OR_RETURN(s.table, ParseTableName());
    if (Keywords({"as", "serde"})) {
      return Status::NotSupported(
          "SHOW CREATE TABLE ... AS SERDE shows a Hive table's DDL; a "
          "Delta table has none: SHOW CREATE TABLE " +
          DisplayTableName(s.table));
    }
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return s;
  }

  Result<ShowTablesStatement> ParseShowTables() {
    Next();  // SHOW
    Next();  // TABLES
    ShowTablesStatement s;
    if (Keyword("from") || Keyword("in")) {
      SLUICE_ASSIGN_OR_RETURN(std::string schema, Identifier());
      s.schema = std::move(schema);
    }
    if (Keyword("like") || Peek().kind == TokenKind::kString) {
      SLUICE_ASSIGN_OR_RETURN(std::string pattern, StringLiteral("a pattern string after LIKE"));
      s.pattern = std::move(pattern);
    }
    SLUICE_RETURN_NOT_OK(ExpectEnd());
    return s;
  }
};

}  // namespace

Result<std::optional<TableStatement>> ParseTableStatement(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(sql));
  Parser parser(sql, std::move(tokens));
  return parser.Parse();
}

}  // namespace sluice::sql
