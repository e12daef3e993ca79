#include "plan/stream_query_parser.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "common/interval.h"
#include "common/strings.h"
#include "dialect/tokenizer.h"
#include "engine/relation_names.h"

namespace sluice::plan {

using dialect::DescribePosition;
using dialect::Token;
using dialect::Tokenize;
using dialect::TokenKind;
namespace {

// Words that end a relation: they cannot be a bare alias.
bool IsClauseKeyword(const Token& t) {
  static const std::set<std::string> kWords = {
      "where",     "group",       "order",     "having",  "limit",   "offset",  "join",   "inner",
      "left",      "right",       "full",      "outer",   "cross",   "natural", "on",     "using",
      "union",     "except",      "intersect", "window",  "qualify", "semi",    "anti",   "asof",
      "lateral",   "positional",  "pivot",     "unpivot", "sample",  "using",   "select", "from",
      "watermark", "tablesample", "returning", "as",      "delay",   "values",  "with"};
  return t.kind == TokenKind::kWord && kWords.count(AsciiLower(t.text)) > 0;
}

bool IsUnitWord(const Token& t) {
  if (t.kind != TokenKind::kWord) return false;
  static const std::set<std::string> kUnits = {
      "microsecond", "microseconds", "us",      "millisecond", "milliseconds", "ms",    "milli",
      "millis",      "second",       "seconds", "sec",         "secs",         "s",     "minute",
      "minutes",     "min",          "mins",    "m",           "hour",         "hours", "h",
      "day",         "days",         "d",       "week",        "weeks",        "w",     "month",
      "months",      "year",         "years"};
  return kUnits.count(AsciiLower(t.text)) > 0;
}

class Parser {
 public:
  Parser(std::string_view sql, std::vector<Token> tokens) : sql_(sql), t_(std::move(tokens)) {}

  Result<ParsedStreamingQuery> Run() {
    ParsedStreamingQuery out;
    size_t copied = 0;  // bytes of sql_ copied to out.sql
    // Per parenthesis depth: the last clause keyword seen (to know when "," continues a FROM).
    std::vector<std::string> clause(1, "");
    for (size_t i = 0; t_[i].kind != TokenKind::kEnd; ++i) {
      const Token& tok = t_[i];
      if (tok.IsSymbol("(")) {
        clause.push_back("");
        continue;
      }
      if (tok.IsSymbol(")")) {
        if (clause.size() > 1) clause.pop_back();
        continue;
      }
      if (tok.kind == TokenKind::kWord) {
        std::string w = AsciiLower(tok.text);
        if (w == "select" || w == "from" || w == "where" || w == "group" || w == "having" ||
            w == "order" || w == "qualify" || w == "limit" || w == "union") {
          clause.back() = w;
        }
      }
      if (!tok.IsKeyword("stream") || i == 0) continue;
      const Token& prev = t_[i - 1];
      bool relation_position = prev.IsKeyword("from") || prev.IsKeyword("join") ||
                               (prev.IsSymbol(",") && clause.back() == "from");
      if (!relation_position) continue;
      size_t index = out.streams.size();
      StreamRelation relation;
      size_t next = i + 1;
      SLUICE_RETURN_NOT_OK(ParseRelation(&next, index, &relation));
      out.sql += sql_.substr(copied, tok.begin - copied);
      out.sql += StreamViewName(index) + " AS " + alias_sql_;
      copied = t_[next - 1].end;
      out.streams.push_back(std::move(relation));
      i = next - 1;
    }
    out.sql += sql_.substr(copied);
    if (out.streams.empty()) {
      return Status::InvalidArgument(
          "a streaming query must read at least one STREAM relation (FROM STREAM <table> or "
          "FROM STREAM read_files(...)); none found");
    }
    return out;
  }

 private:
  Status Error(size_t token, const std::string& what) const {
    return Status::InvalidArgument(what + " at " + DescribePosition(sql_, t_[token].begin));
  }
  std::string Text(size_t from, size_t to) const {  // source text of tokens [from, to)
    if (from >= to) return "";
    return std::string(sql_.substr(t_[from].begin, t_[to - 1].end - t_[from].begin));
  }
  bool IsName(const Token& t) const {
    return (t.kind == TokenKind::kWord && !IsClauseKeyword(t)) ||
           t.kind == TokenKind::kQuotedIdent || t.kind == TokenKind::kBacktick;
  }

  Status ParseRelation(size_t* pos, size_t index, StreamRelation* r) {
    size_t i = *pos;
    if (t_[i].IsSymbol("(")) {
      // STREAM ( table_name [WITH (options)] )
      ++i;
      if (!IsTableNameStart(t_[i])) {
        return Error(i, "STREAM ( must be followed by a table name: STREAM(t) or STREAM t");
      }
      ParseTableName(&i, r);
      if (t_[i].IsKeyword("with")) SLUICE_RETURN_NOT_OK(ParseOptions(&i, r));
      if (!t_[i].IsSymbol(")")) {
        return Error(i, "expected ) after the table name of STREAM(" + r->table);
      }
      ++i;
      SLUICE_RETURN_NOT_OK(ParseTail(&i, index, r));
      *pos = i;
      return Status::OK();
    }
    const Token& first = t_[i];
    if (!(first.kind == TokenKind::kWord || first.kind == TokenKind::kQuotedIdent ||
          first.kind == TokenKind::kBacktick) ||
        IsClauseKeyword(first)) {
      return Error(i,
                   "STREAM must be followed by a table name or a streaming table function "
                   "(table_changes, read_files, read_rate, read_kafka, nexmark)");
    }
    if (first.kind == TokenKind::kWord && t_[i + 1].IsSymbol("(")) {
      std::string fn = AsciiLower(first.text);
      if (fn == "table_changes") {
        r->kind = StreamRelation::Kind::kTableChanges;
      } else if (fn == "read_files") {
        r->kind = StreamRelation::Kind::kReadFiles;
      } else if (fn == "read_rate") {
        r->kind = StreamRelation::Kind::kReadRate;
      } else if (fn == "read_kafka") {
        r->kind = StreamRelation::Kind::kReadKafka;
      } else if (fn == "nexmark") {
        r->kind = StreamRelation::Kind::kNexmark;
      } else {
        return Error(i, "unknown streaming table function '" + first.text +
                            "' (expected table_changes, read_files, read_rate, read_kafka or "
                            "nexmark)");
      }
      i += 2;
      SLUICE_RETURN_NOT_OK(ParseArguments(&i, r));
      if (r->kind == StreamRelation::Kind::kTableChanges) {
        if (r->positional.empty()) return Error(*pos, "table_changes needs a table name");
        r->table = r->positional[0];
      }
    } else {
      ParseTableName(&i, r);
    }
    SLUICE_RETURN_NOT_OK(ParseTail(&i, index, r));
    *pos = i;
    return Status::OK();
  }

  bool IsTableNameStart(const Token& t) const {
    return (t.kind == TokenKind::kWord || t.kind == TokenKind::kQuotedIdent ||
            t.kind == TokenKind::kBacktick) &&
           !IsClauseKeyword(t);
  }

  // A (dotted) table name at *pos.
  void ParseTableName(size_t* pos, StreamRelation* r) {
    size_t i = *pos;
    r->kind = StreamRelation::Kind::kTable;
    r->table = t_[i].text;
    ++i;
    while (t_[i].IsSymbol(".") &&
           (t_[i + 1].kind == TokenKind::kWord || t_[i + 1].kind == TokenKind::kQuotedIdent ||
            t_[i + 1].kind == TokenKind::kBacktick)) {
      r->table += "." + t_[i + 1].text;
      i += 2;
    }
    *pos = i;
  }

  // At "WITH": ( key [=] value [, ...] ) -- Databricks' options of a table reference. Keys are
  // identifiers (dotted) or string literals, values literals; both go to `named`, keys
  // lower-cased. A key given twice (also as a named argument) is an error.
  Status ParseOptions(size_t* pos, StreamRelation* r) {
    size_t i = *pos + 1;
    if (!t_[i].IsSymbol("(")) return Error(i, "WITH must be followed by (option = value, ...)");
    ++i;
    while (true) {
      size_t key_at = i;
      std::string key;
      if (t_[i].kind == TokenKind::kString) {
        key = t_[i++].text;
      } else if (t_[i].kind == TokenKind::kWord || t_[i].kind == TokenKind::kQuotedIdent ||
                 t_[i].kind == TokenKind::kBacktick) {
        key = t_[i++].text;
        while (t_[i].IsSymbol(".") && t_[i + 1].kind == TokenKind::kWord) {
          key += "." + t_[i + 1].text;
          i += 2;
        }
      } else {
        return Error(i, "expected an option name in WITH (...)");
      }
      if (t_[i].IsSymbol("=")) ++i;
      std::string value;
      if (t_[i].kind == TokenKind::kWord && AsciiLower(t_[i].text) == "secret" &&
          t_[i + 1].IsSymbol("(")) {
        // Databricks' secret(scope, key): kept as its text, resolved when the query starts
        // (common/secret_reference.h), so that a stored definition holds no secret.
        size_t from = i;
        i += 2;
        while (t_[i].kind != TokenKind::kEnd && !t_[i].IsSymbol(")")) ++i;
        if (t_[i].kind == TokenKind::kEnd) return Error(from, "secret( is not closed by )");
        ++i;
        value = Text(from, i);
      } else if (t_[i].kind == TokenKind::kString || t_[i].kind == TokenKind::kNumber ||
                 t_[i].kind == TokenKind::kWord) {
        value = t_[i++].text;
      } else if (t_[i].IsSymbol("-") && t_[i + 1].kind == TokenKind::kNumber) {
        value = "-" + t_[i + 1].text;
        i += 2;
      } else {
        return Error(i, "expected a literal value for option '" + key + "' in WITH (...)");
      }
      key = AsciiLower(key);
      if (!r->named.emplace(key, value).second) {
        return Error(key_at, "option '" + key + "' is given twice");
      }
      if (t_[i].IsSymbol(")")) break;
      if (!t_[i].IsSymbol(",")) return Error(i, "expected , or ) in WITH (...)");
      ++i;
    }
    *pos = i + 1;
    return Status::OK();
  }

  // After the relation: [WITH (options)] [AS] [alias] [WATERMARK ... [AS alias]].
  Status ParseTail(size_t* pos, size_t index, StreamRelation* r) {
    size_t i = *pos;
    if (t_[i].IsKeyword("with")) SLUICE_RETURN_NOT_OK(ParseOptions(&i, r));
    alias_sql_.clear();
    SLUICE_RETURN_NOT_OK(ParseAlias(&i, r));
    if (t_[i].IsKeyword("watermark")) {
      SLUICE_RETURN_NOT_OK(ParseWatermark(&i, r));
      if (alias_sql_.empty()) SLUICE_RETURN_NOT_OK(ParseAlias(&i, r));
    }
    if (alias_sql_.empty()) {
      if (r->kind == StreamRelation::Kind::kTable) {
        // Unaliased: the table's own name qualifies its columns, as for a static table.
        std::string last =
            r->table.substr(r->table.rfind('.') == std::string::npos ? 0 : r->table.rfind('.') + 1);
        r->alias = last;
        alias_sql_ = "\"" + last + "\"";
      } else {
        r->alias = StreamViewName(index);
        alias_sql_ = r->alias;
      }
    }
    *pos = i;
    return Status::OK();
  }

  Status ParseAlias(size_t* pos, StreamRelation* r) {
    size_t i = *pos;
    bool has_as = t_[i].IsKeyword("as");
    if (has_as) ++i;
    if (IsName(t_[i]) && !(t_[i].kind == TokenKind::kWord && IsClauseKeyword(t_[i]))) {
      r->alias = t_[i].text;
      alias_sql_ = Text(i, i + 1);
      *pos = i + 1;
      return Status::OK();
    }
    if (has_as) return Error(i, "AS must be followed by an alias");
    return Status::OK();
  }

  // After "(": arguments up to the matching ")".
  Status ParseArguments(size_t* pos, StreamRelation* r) {
    size_t i = *pos;
    if (t_[i].IsSymbol(")")) {
      *pos = i + 1;
      return Status::OK();
    }
    while (true) {
      size_t start = i;
      int depth = 0;
      while (true) {
        const Token& t = t_[i];
        if (t.kind == TokenKind::kEnd) return Error(start, "unterminated argument list");
        if (t.IsSymbol("(")) ++depth;
        if (t.IsSymbol(")")) {
          if (depth == 0) break;
          --depth;
        }
        if (t.IsSymbol(",") && depth == 0) break;
        ++i;
      }
      if (i == start) return Error(i, "empty argument");
      size_t value_from = start;
      std::string name;
      if (i - start >= 3 && t_[start].kind == TokenKind::kWord && t_[start + 1].IsSymbol("=>")) {
        name = AsciiLower(t_[start].text);
        value_from = start + 2;
      }
      std::string value;
      size_t n = i - value_from;
      const Token& v = t_[value_from];
      if (n == 1 && (v.kind == TokenKind::kString || v.kind == TokenKind::kNumber ||
                     v.kind == TokenKind::kWord || v.kind == TokenKind::kQuotedIdent ||
                     v.kind == TokenKind::kBacktick)) {
        value = v.text;
      } else if (n == 2 && v.IsSymbol("-") && t_[value_from + 1].kind == TokenKind::kNumber) {
        value = "-" + t_[value_from + 1].text;
      } else {
        value = Text(value_from, i);
      }
      if (name.empty()) {
        if (!r->named.empty()) return Error(start, "positional argument after named arguments");
        r->positional.push_back(std::move(value));
      } else {
        r->named[name] = std::move(value);
      }
      if (t_[i].IsSymbol(")")) {
        *pos = i + 1;
        return Status::OK();
      }
      ++i;  // ","
    }
  }

  // At "WATERMARK": <expr> [AS column] DELAY OF INTERVAL <interval>.
  Status ParseWatermark(size_t* pos, StreamRelation* r) {
    size_t i = *pos + 1;
    size_t start = i;
    int depth = 0;
    while (true) {
      const Token& t = t_[i];
      if (t.kind == TokenKind::kEnd) {
        return Error(*pos, "WATERMARK must be followed by DELAY OF INTERVAL ...");
      }
      if (t.IsSymbol("(")) ++depth;
      if (t.IsSymbol(")")) {
        if (depth == 0) return Error(*pos, "WATERMARK must be followed by DELAY OF INTERVAL ...");
        --depth;
      }
      if (depth == 0 && (t.IsKeyword("as") || t.IsKeyword("delay"))) break;
      ++i;
    }
    if (i == start) return Error(start, "WATERMARK needs an event-time column or expression");
    WatermarkSpec spec;
    spec.expression = Text(start, i);
    if (t_[i].IsKeyword("as")) {
      ++i;
      if (!IsName(t_[i])) return Error(i, "WATERMARK ... AS must name the event-time column");
      spec.column = t_[i].text;
      ++i;
    } else if (i == start + 1 && IsName(t_[start])) {
      spec.column = t_[start].text;
      spec.expression =
          t_[start].kind == TokenKind::kWord ? t_[start].text : Text(start, start + 1);
    } else {
      return Error(start, "a WATERMARK expression needs AS <column> to name its event time");
    }
    if (!t_[i].IsKeyword("delay") || !t_[i + 1].IsKeyword("of")) {
      return Error(i, "WATERMARK must be followed by DELAY OF INTERVAL ...");
    }
    i += 2;
    if (!t_[i].IsKeyword("interval")) return Error(i, "DELAY OF must be followed by INTERVAL");
    ++i;
    std::string text;
    size_t interval_at = i;
    if (t_[i].kind == TokenKind::kString) {
      text = t_[i].text;
      ++i;
      if (IsUnitWord(t_[i])) text += " " + t_[i++].text;
    } else if (t_[i].kind == TokenKind::kNumber && IsUnitWord(t_[i + 1])) {
      text = t_[i].text + " " + t_[i + 1].text;
      i += 2;
      while (t_[i].kind == TokenKind::kNumber && IsUnitWord(t_[i + 1])) {
        text += " " + t_[i].text + " " + t_[i + 1].text;
        i += 2;
      }
    } else {
      return Error(i, "expected an interval such as INTERVAL 10 SECONDS or INTERVAL '1 minute'");
    }
    auto d = ParseDuration(text);
    if (!d.ok()) return Error(interval_at, "bad WATERMARK delay: " + d.status().message());
    if (d->micros < 0) return Error(interval_at, "a WATERMARK delay must not be negative");
    spec.delay_ms = d->millis();
    r->watermark = std::move(spec);
    *pos = i;
    return Status::OK();
  }

  std::string_view sql_;
  std::vector<Token> t_;
  std::string alias_sql_;  // the alias as it goes into the rewritten SQL
};

}  // namespace

bool WatermarkSpec::IsPlainColumn() const {
  if (expression == column) return true;
  // "ts" written quoted: "\"ts\"".
  return expression.size() == column.size() + 2 && expression.front() == '"' &&
         expression.back() == '"' && expression.substr(1, column.size()) == column;
}

const char* StreamRelationKindName(StreamRelation::Kind kind) {
  switch (kind) {
    case StreamRelation::Kind::kTable:
      return "table";
    case StreamRelation::Kind::kTableChanges:
      return "table_changes";
    case StreamRelation::Kind::kReadFiles:
      return "read_files";
    case StreamRelation::Kind::kReadRate:
      return "read_rate";
    case StreamRelation::Kind::kReadKafka:
      return "read_kafka";
    case StreamRelation::Kind::kNexmark:
      return "nexmark";
  }
  return "?";
}

std::string StreamViewName(size_t i) { return engine::StreamViewName(i); }

Result<ParsedStreamingQuery> ParseStreamingQuery(std::string_view select_sql) {
  SLUICE_ASSIGN_OR_RETURN(auto tokens, Tokenize(select_sql));
  Parser parser(select_sql, std::move(tokens));
  return parser.Run();
}

}  // namespace sluice::plan
