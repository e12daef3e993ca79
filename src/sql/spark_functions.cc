#include "sql/spark_functions.h"

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "plan/tokenizer.h"
#include "sources/schema_text.h"

namespace sluice::sql {

namespace {

using plan::Token;
using plan::TokenKind;

constexpr std::string_view kCorruptRecord = "_corrupt_record";

// DuckDB's json_transform structure for a type: "BIGINT", ["VARCHAR"], {"a": "INTEGER"}.
nlohmann::ordered_json Structure(const engine::DataType& type) {
  switch (type.id) {
    case engine::TypeId::kStruct: {
      nlohmann::ordered_json o = nlohmann::ordered_json::object();
      for (const auto& f : type.children) o[f.name] = Structure(f.type);
      return o;
    }
    case engine::TypeId::kList:
      return nlohmann::ordered_json::array({Structure(type.children.at(0).type)});
    default:
      return type.ToSql();
  }
}

// The index of the token closing the call whose '(' is at `open`, and the indexes of its
// top-level commas. Npos when unbalanced.
size_t CloseOf(const std::vector<Token>& tokens, size_t open, std::vector<size_t>* commas) {
  int depth = 0;
  for (size_t i = open; i < tokens.size() && tokens[i].kind != TokenKind::kEnd; ++i) {
    if (tokens[i].IsSymbol("(") || tokens[i].IsSymbol("[")) ++depth;
    if (tokens[i].IsSymbol(")") || tokens[i].IsSymbol("]")) {
      if (--depth == 0) return i;
    }
    if (depth == 1 && tokens[i].IsSymbol(",")) commas->push_back(i);
  }
  return std::string_view::npos;
}

// Spark DDL type text -> DuckDB type text: ARRAY<T> -> T[], STRUCT<a: T, b U> -> STRUCT(a T, b U),
// MAP<K, V> -> MAP(K, V); other names (and their parameters) as written.
class DdlConverter {
 public:
  explicit DdlConverter(const std::vector<Token>& tokens) : t_(tokens) {}

  // "name type, name type" -> the same with DuckDB types.
  Result<std::string> Fields(bool in_struct) {
    std::string out;
    for (;;) {
      const Token& name = t_[i_];
      if (name.kind != TokenKind::kWord && name.kind != TokenKind::kQuotedIdent &&
          name.kind != TokenKind::kBacktick) {
        return Error("a field name");
      }
      ++i_;
      if (in_struct && t_[i_].IsSymbol(":")) ++i_;
      SLUICE_ASSIGN_OR_RETURN(std::string type, Type());
      out += QuoteIdentifier(name.text) + " " + type;
      if (t_[i_].IsKeyword("not") && t_[i_ + 1].IsKeyword("null")) i_ += 2;
      if (!t_[i_].IsSymbol(",")) return out;
      out += ", ";
      ++i_;
    }
  }
  bool AtEnd() const { return t_[i_].kind == TokenKind::kEnd; }

 private:
  Result<std::string> Type() {
    const Token& w = t_[i_];
    if (w.kind != TokenKind::kWord) return Error("a type");
    ++i_;
    if (w.IsKeyword("array") && t_[i_].IsSymbol("<")) {
      ++i_;
      SLUICE_ASSIGN_OR_RETURN(std::string element, Type());
      SLUICE_RETURN_NOT_OK(Expect(">"));
      return element + "[]";
    }
    if (w.IsKeyword("map") && t_[i_].IsSymbol("<")) {
      ++i_;
      SLUICE_ASSIGN_OR_RETURN(std::string key, Type());
      SLUICE_RETURN_NOT_OK(Expect(","));
      SLUICE_ASSIGN_OR_RETURN(std::string value, Type());
      SLUICE_RETURN_NOT_OK(Expect(">"));
      return "MAP(" + key + ", " + value + ")";
    }
    if (w.IsKeyword("struct") && t_[i_].IsSymbol("<")) {
      ++i_;
      SLUICE_ASSIGN_OR_RETURN(std::string fields, Fields(true));
      SLUICE_RETURN_NOT_OK(Expect(">"));
      return "STRUCT(" + fields + ")";
    }
    std::string out = w.text;
    if (t_[i_].IsSymbol("(")) {  // DECIMAL(10, 2), VARCHAR(20)
      out += "(";
      for (++i_; !t_[i_].IsSymbol(")"); ++i_) {
        if (t_[i_].kind == TokenKind::kEnd) return Error("')'");
        out += t_[i_].text;
      }
      ++i_;
      out += ")";
    }
    return out;
  }
  Status Expect(std::string_view symbol) {
    // ">>" closes two levels (ARRAY<ARRAY<INT>>): the tokenizer may give it as one symbol.
    if (symbol == ">" && t_[i_].IsSymbol(">>")) {
      pending_close_ = true;
      ++i_;
      return Status::OK();
    }
    if (symbol == ">" && pending_close_) {
      pending_close_ = false;
      return Status::OK();
    }
    if (!t_[i_].IsSymbol(symbol)) return Error("'" + std::string(symbol) + "'");
    ++i_;
    return Status::OK();
  }
  Status Error(const std::string& expected) const {
    return Status::InvalidArgument("from_json schema: expected " + expected + ", found '" +
                                   t_[i_].text + "'");
  }

  const std::vector<Token>& t_;
  size_t i_ = 0;
  bool pending_close_ = false;
};

Result<std::string> DdlToDuckDb(const std::string& ddl) {
  SLUICE_ASSIGN_OR_RETURN(auto tokens, plan::Tokenize(ddl));
  DdlConverter c(tokens);
  SLUICE_ASSIGN_OR_RETURN(std::string out, c.Fields(false));
  if (!c.AtEnd()) return Status::InvalidArgument("from_json schema: unexpected text after the fields");
  return out;
}

}  // namespace

Result<std::string> RewriteSparkFunctions(engine::Connection* conn, std::string_view sql) {
  // Cheap exit: most statements have no from_json at all.
  if (AsciiLower(sql).find("from_json") == std::string::npos) return std::string(sql);
  auto tokens = plan::Tokenize(sql);
  if (!tokens.ok()) return std::string(sql);  // the engine reports the syntax error itself
  std::string out;
  size_t copied = 0;
  for (size_t i = 0; i + 1 < tokens->size(); ++i) {
    const Token& t = (*tokens)[i];
    if (!t.IsKeyword("from_json") || !(*tokens)[i + 1].IsSymbol("(")) continue;
    if (i > 0 && (*tokens)[i - 1].IsSymbol(".")) continue;
    std::vector<size_t> commas;
    size_t close = CloseOf(*tokens, i + 1, &commas);
    if (close == std::string_view::npos || commas.empty()) continue;  // the engine complains
    const Token& schema = (*tokens)[commas[0] + 1];
    if (schema.kind != TokenKind::kString) {
      return Status::InvalidArgument("from_json: the schema must be a string literal such as "
                                     "'id BIGINT, name STRING', at " +
                                     plan::DescribePosition(sql, schema.begin));
    }
    std::string text = schema.text;
    size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) continue;
    if (commas.size() > 1 || commas[0] + 2 != close) {
      return Status::InvalidArgument(
          "from_json: options (a third argument) are not supported, at " +
          plan::DescribePosition(sql, (*tokens)[commas[0] + 2].begin));
    }
    auto duckdb_text = DdlToDuckDb(text);
    Result<engine::Schema> fields =
        duckdb_text.ok() ? sources::ParseSchemaText(conn, *duckdb_text, "from_json schema")
                         : Result<engine::Schema>(duckdb_text.status());
    if (!fields.ok()) {
      return Status::InvalidArgument(fields.status().message() + " (at " +
                                     plan::DescribePosition(sql, schema.begin) + ")");
    }
    nlohmann::ordered_json structure = nlohmann::ordered_json::object();
    bool has_corrupt = false;
    for (const auto& f : *fields) {
      structure[f.name] = Structure(f.type);
      if (f.name == kCorruptRecord) has_corrupt = true;
    }
    // As a SQL literal ('' for a quote a field name may hold).
    std::string escaped;
    for (char c : structure.dump()) escaped += c == '\'' ? std::string("''") : std::string(1, c);
    const std::string quoted = "'" + escaped + "'";
    std::string arg(sql.substr(t.end, schema.begin - t.end));  // "(expr,"
    arg = arg.substr(1, arg.rfind(',') - 1);                   // expr
    std::string x = "(" + arg + ")";
    std::string invalid = has_corrupt ? "json_transform(json_object('" +
                                            std::string(kCorruptRecord) + "', " + x + "), " +
                                            quoted + ")"
                                      : "json_transform('{}', " + quoted + ")";
    // Two parses per value (json_valid, then json_transform). One parse with
    // COALESCE(TRY(json_transform(..)), <validate the NULL results>) saves ~15 % on clean input
    // but DuckDB's TRY re-runs a whole vector row by row when one value in it fails: 7x slower
    // with 1 % malformed values (bench/RESULTS.md "Kafka-fed").
    std::string valid = "json_transform(" + x + ", " + quoted + ")";
    std::string replacement = "(CASE WHEN " + x + " IS NULL THEN NULL WHEN json_valid(" + x +
                              ") THEN " + valid + " ELSE " + invalid + " END)";
    out.append(sql.substr(copied, t.begin - copied));
    out.append(replacement);
    copied = (*tokens)[close].end;
    i = close;
  }
  out.append(sql.substr(copied));
  return out;
}

}  // namespace sluice::sql
