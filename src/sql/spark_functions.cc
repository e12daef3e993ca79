#include "sql/spark_functions.h"

#include <algorithm>
#include <vector>

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
  if (!c.AtEnd())
    return Status::InvalidArgument("from_json schema: unexpected text after the fields");
  return out;
}

// ---- Spark spellings rewritten token by token: the cast to STRING, reserved words. ----

// One edit of a statement's text: [begin, end) replaced by `text` (an insertion when equal).
struct Edit {
  size_t begin;
  size_t end;
  std::string text;
};

std::string ApplyEdits(std::string_view sql, std::vector<Edit> edits) {
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    // At one offset, insertions before the replacement that starts there.
    if (a.begin != b.begin) return a.begin < b.begin;
    return (a.begin == a.end) > (b.begin == b.end);
  });
  std::string out;
  size_t copied = 0;
  for (const Edit& e : edits) {
    out.append(sql.substr(copied, e.begin - copied));
    out.append(e.text);
    copied = std::max(copied, e.end);
  }
  out.append(sql.substr(copied));
  return out;
}

// The index of the token opening the bracket closed at `close`, or npos.
size_t OpenOf(const std::vector<Token>& tokens, size_t close) {
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (tokens[i].IsSymbol(")") || tokens[i].IsSymbol("]")) ++depth;
    if (tokens[i].IsSymbol("(") || tokens[i].IsSymbol("[")) {
      if (--depth == 0) return i;
    }
  }
  return std::string_view::npos;
}

// Words that may stand right before '(' without being a function name.
bool IsClauseWord(const Token& t) {
  static const char* const kWords[] = {
      "select", "where",   "and",     "or",       "not",   "on",     "when",      "then",   "else",
      "by",     "having",  "in",      "as",       "from",  "join",   "exists",    "values", "case",
      "is",     "like",    "between", "distinct", "all",   "any",    "some",      "over",   "using",
      "return", "qualify", "filter",  "within",   "union", "except", "intersect", "with"};
  if (t.kind != TokenKind::kWord) return false;
  for (const char* w : kWords) {
    if (t.IsKeyword(w)) return true;
  }
  return false;
}

// The index of the first token of the operand of a postfix `::` at `colons`: a literal, or a
// chain of names, calls f(...) and parenthesized expressions joined by '.', each with [...]
// subscripts (a.b, headers[3].value, f(x).y, (a || b)). Npos when the operand has another form
// (left to the engine).
size_t OperandStart(const std::vector<Token>& tokens, size_t colons) {
  constexpr size_t kNone = std::string_view::npos;
  auto is_name = [](const Token& t) {
    return t.kind == TokenKind::kWord || t.kind == TokenKind::kQuotedIdent ||
           t.kind == TokenKind::kBacktick;
  };
  if (colons == 0) return kNone;
  size_t j = colons - 1;
  const Token& last = tokens[j];
  if (last.kind == TokenKind::kString || last.kind == TokenKind::kNumber) {
    // X'41'::STRING: the prefix X (or E, N) is part of the literal.
    if (j > 0 && tokens[j - 1].kind == TokenKind::kWord && tokens[j - 1].end == last.begin) {
      return j - 1;
    }
    return j;
  }
  for (;;) {
    while (tokens[j].IsSymbol("]")) {  // x[1]
      size_t open = OpenOf(tokens, j);
      if (open == kNone || open == 0) return kNone;
      j = open - 1;
    }
    size_t start;
    if (tokens[j].IsSymbol(")")) {
      size_t open = OpenOf(tokens, j);
      if (open == kNone) return kNone;
      const bool call =
          open > 0 && is_name(tokens[open - 1]) &&
          !(tokens[open - 1].kind == TokenKind::kWord && IsClauseWord(tokens[open - 1]));
      start = call ? open - 1 : open;
    } else if (is_name(tokens[j])) {
      start = j;
    } else {
      return kNone;
    }
    if (start < 2 || !tokens[start - 1].IsSymbol(".")) return start;
    j = start - 2;  // the chain goes on before the '.'
  }
}

// STRING, VARCHAR or VARCHAR(n) at `i` (or with `binary`, BINARY): the index after it, or npos.
size_t StringTypeEnd(const std::vector<Token>& tokens, size_t i, bool* binary) {
  *binary = tokens[i].IsKeyword("binary");
  if (tokens[i].IsKeyword("string") || *binary) return i + 1;
  if (!tokens[i].IsKeyword("varchar")) return std::string_view::npos;
  if (tokens[i + 1].IsSymbol("(") && tokens[i + 2].kind == TokenKind::kNumber &&
      tokens[i + 3].IsSymbol(")")) {
    return i + 4;
  }
  return i + 1;
}

// Words Spark SQL lets a column be named (non-reserved there) that DuckDB's parser reserves.
// (partition, timestamp, value and key are not reserved in DuckDB: nothing to do.)
bool IsReservedColumnWord(const Token& t) {
  return t.kind == TokenKind::kWord && (t.IsKeyword("offset") || t.IsKeyword("window"));
}

// True when a column name (or an alias), not a clause keyword, stands after `prev`: after SELECT,
// a comma, an opening parenthesis, BY, WHERE, AS, an operator, ... (the OFFSET clause follows an
// expression or a table; a WINDOW clause follows the FROM/WHERE/GROUP BY/HAVING parts).
bool ColumnNameFollows(const Token& prev) {
  if (prev.kind == TokenKind::kSymbol) {
    static const char* const kSymbols[] = {
        ",", "(", "[", "=", "<",  ">", "<=", ">=", "<>", "!=", "==", "+",
        "-", "*", "/", "%", "||", "&", "|",  "^",  "<<", ">>", "->", "->>"};
    for (const char* s : kSymbols) {
      if (prev.text == s) return true;
    }
    return false;
  }
  static const char* const kWords[] = {
      "select", "distinct", "by",   "where",   "and", "or", "not",  "on",      "when", "then",
      "else",   "having",   "case", "qualify", "in",  "is", "like", "between", "as"};
  for (const char* w : kWords) {
    if (prev.IsKeyword(w)) return true;
  }
  return false;
}

// CAST(x AS STRING) / TRY_CAST(x AS STRING) / x::STRING / string(x) -> spark_string(x) (STRING
// and VARCHAR alike: Spark's CAST(binary AS STRING) decodes UTF-8), the same with BINARY ->
// spark_binary(x) (Spark's CAST(string AS BINARY) encodes UTF-8), X'..' -> unhex('..'), and
// `offset` / `window` quoted where they name a column.
std::string RewriteSpellings(std::string_view sql, const std::vector<Token>& tokens) {
  constexpr std::string_view kSparkString = "spark_string";
  constexpr std::string_view kSparkBinary = "spark_binary";
  std::vector<Edit> edits;
  for (size_t i = 0; tokens[i].kind != TokenKind::kEnd; ++i) {
    const Token& t = tokens[i];
    const bool after_dot = i > 0 && tokens[i - 1].IsSymbol(".");
    if ((t.IsKeyword("cast") || t.IsKeyword("try_cast")) && tokens[i + 1].IsSymbol("(") &&
        !after_dot) {
      std::vector<size_t> commas;
      size_t close = CloseOf(tokens, i + 1, &commas);
      if (close == std::string_view::npos || !commas.empty()) continue;
      // The last top-level AS: CAST(a AS STRING); CAST((x AS y) ...) has its AS deeper.
      size_t as = std::string_view::npos;
      int depth = 0;
      for (size_t k = i + 1; k < close; ++k) {
        if (tokens[k].IsSymbol("(") || tokens[k].IsSymbol("[")) ++depth;
        if (tokens[k].IsSymbol(")") || tokens[k].IsSymbol("]")) --depth;
        if (depth == 1 && tokens[k].IsKeyword("as")) as = k;
      }
      bool binary = false;
      if (as == std::string_view::npos || StringTypeEnd(tokens, as + 1, &binary) != close) continue;
      edits.push_back({t.begin, t.end, std::string(binary ? kSparkBinary : kSparkString)});
      edits.push_back({tokens[as - 1].end, tokens[close].begin, ""});
      continue;
    }
    if (t.IsSymbol("::")) {
      bool binary = false;
      size_t type_end = StringTypeEnd(tokens, i + 1, &binary);
      if (type_end == std::string_view::npos || tokens[type_end].IsSymbol("[")) continue;
      size_t start = OperandStart(tokens, i);
      if (start == std::string_view::npos) continue;
      edits.push_back({tokens[start].begin, tokens[start].begin,
                       std::string(binary ? kSparkBinary : kSparkString) + "("});
      edits.push_back({tokens[i - 1].end, tokens[type_end - 1].end, ")"});
      continue;
    }
    if (t.IsKeyword("x") && tokens[i + 1].kind == TokenKind::kString && tokens[i + 1].end > t.end &&
        tokens[i + 1].begin == t.end) {
      // Spark's binary literal X'7B22': DuckDB reads X'..' as the text 'x7B22'.
      edits.push_back(
          {t.begin, tokens[i + 1].end, "unhex(" + QuoteLiteral(tokens[i + 1].text) + ")"});
      ++i;
      continue;
    }
    if ((t.IsKeyword("string") || t.IsKeyword("binary")) && tokens[i + 1].IsSymbol("(") &&
        !after_dot) {
      edits.push_back(
          {t.begin, t.end, std::string(t.IsKeyword("binary") ? kSparkBinary : kSparkString)});
      continue;
    }
    if (IsReservedColumnWord(t) && i > 0 && !after_dot && ColumnNameFollows(tokens[i - 1]) &&
        !tokens[i + 1].IsSymbol("(")) {
      edits.push_back({t.begin, t.end, QuoteIdentifier(t.text)});
    }
  }
  if (edits.empty()) return std::string(sql);
  return ApplyEdits(sql, std::move(edits));
}

Result<std::string> RewriteFromJson(engine::Connection* conn, std::string_view sql) {
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
      return Status::InvalidArgument(
          "from_json: the schema must be a string literal such as "
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
    std::string invalid = has_corrupt
                              ? "json_transform(json_object('" + std::string(kCorruptRecord) +
                                    "', " + x + "), " + quoted + ")"
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

}  // namespace

Result<std::string> RewriteSparkFunctions(engine::Connection* conn, std::string_view sql) {
  std::string text(sql);
  const std::string lower = AsciiLower(sql);
  bool spellings = false;
  for (const char* word : {"string", "varchar", "binary", "offset", "window", "x'"}) {
    spellings = spellings || lower.find(word) != std::string::npos;
  }
  if (spellings) {
    auto tokens = plan::Tokenize(sql);
    if (tokens.ok()) text = RewriteSpellings(sql, *tokens);  // else the engine reports the error
  }
  return RewriteFromJson(conn, text);
}

}  // namespace sluice::sql
