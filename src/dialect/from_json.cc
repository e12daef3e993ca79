#include "dialect/from_json.h"

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "dialect/token_edits.h"
#include "dialect/types.h"
#include "sources/schema_text.h"

namespace sluice::dialect {
namespace {

constexpr std::string_view kCorruptRecord = "_corrupt_record";

// True for the types whose JSON value Spark reads only from a JSON number (or true / false),
// where DuckDB's json_transform also casts a JSON string ("12" -> 12).
bool IsStrictLeaf(engine::TypeId id) {
  switch (id) {
    case engine::TypeId::kBoolean:
    case engine::TypeId::kTinyInt:
    case engine::TypeId::kSmallInt:
    case engine::TypeId::kInteger:
    case engine::TypeId::kBigInt:
    case engine::TypeId::kFloat:
    case engine::TypeId::kDouble:
    case engine::TypeId::kDecimal:
      return true;
    default:
      return false;
  }
}

// DuckDB's json_transform structure for a type: "BIGINT", ["VARCHAR"], {"a": "INTEGER"}. The
// strict leaves (outside maps) are read as "JSON" text, and *strict is set: the result then goes
// through spark_json_numbers (engine/spark_json_numbers.h), which reads them as Spark does.
nlohmann::ordered_json Structure(const engine::DataType& type, bool* strict) {
  if (IsStrictLeaf(type.id)) {
    *strict = true;
    return "JSON";
  }
  switch (type.id) {
    case engine::TypeId::kStruct: {
      nlohmann::ordered_json o = nlohmann::ordered_json::object();
      for (const auto& f : type.children) o[f.name] = Structure(f.type, strict);
      return o;
    }
    case engine::TypeId::kList:
      return nlohmann::ordered_json::array({Structure(type.children.at(0).type, strict)});
    default:
      return type.ToSql();
  }
}

// A DDL schema 'a INT, tags ARRAY<STRING>' in the engine's words; a schema that is one type
// (ARRAY<INT>, MAP<STRING, INT>, STRUCT<a: INT>) as the one field `kValueField` of that type, with
// *single set.
constexpr std::string_view kValueField = "value";
Result<std::string> DdlToEngine(const std::string& ddl, bool* single) {
  SLUICE_ASSIGN_OR_RETURN(auto tokens, Tokenize(ddl));
  size_t i = 0;
  *single = (tokens[0].IsKeyword("array") || tokens[0].IsKeyword("map") ||
             tokens[0].IsKeyword("struct")) &&
            tokens[1].IsSymbol("<");
  Result<std::string> out = *single ? ConvertType(tokens, &i, TypeTarget::kSchemaText)
                                    : ConvertFields(tokens, &i, false, TypeTarget::kSchemaText);
  if (out.ok() && *single) out = std::string(kValueField) + " " + *out;
  if (!out.ok()) return Status::InvalidArgument("from_json schema: " + out.status().message());
  if (tokens[i].kind != TokenKind::kEnd) {
    return Status::InvalidArgument("from_json schema: unexpected text after the fields");
  }
  return out;
}

}  // namespace

Result<std::string> RewriteFromJson(engine::Connection* conn, std::string_view sql) {
  // Cheap exit: most statements have no from_json at all.
  if (AsciiLower(sql).find("from_json") == std::string::npos) return std::string(sql);
  auto tokens = dialect::Tokenize(sql);
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
          dialect::DescribePosition(sql, schema.begin));
    }
    std::string text = schema.text;
    size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) continue;
    if (commas.size() > 1 || commas[0] + 2 != close) {
      return Status::InvalidArgument(
          "from_json: options (a third argument) are not supported, at " +
          dialect::DescribePosition(sql, (*tokens)[commas[0] + 2].begin));
    }
    bool single = false;
    auto duckdb_text = DdlToEngine(text, &single);
    Result<engine::Schema> fields =
        duckdb_text.ok() ? sources::ParseSchemaText(conn, *duckdb_text, "from_json schema")
                         : Result<engine::Schema>(duckdb_text.status());
    if (!fields.ok()) {
      return Status::InvalidArgument(fields.status().message() + " (at " +
                                     dialect::DescribePosition(sql, schema.begin) + ")");
    }
    nlohmann::ordered_json structure = nlohmann::ordered_json::object();
    bool has_corrupt = false, strict = false;
    for (const auto& f : *fields) {
      structure[f.name] = Structure(f.type, &strict);
      if (f.name == kCorruptRecord) has_corrupt = true;
    }
    // A schema of one type: the JSON value read as that type. A STRUCT<...> is read as a DDL
    // schema (a struct of NULL fields for text that is not JSON); an ARRAY<...> or a MAP<...>
    // is NULL for text that is not JSON or not of the type.
    const bool struct_type =
        single && fields->size() == 1 && (*fields)[0].type.id == engine::TypeId::kStruct;
    engine::DataType result_type;
    result_type.id = engine::TypeId::kStruct;
    result_type.children = *fields;
    if (single && fields->size() == 1) {
      strict = false;
      structure = Structure((*fields)[0].type, &strict);
      result_type = (*fields)[0].type;
    }
    // The engine's JSON reading of numbers and booleans made Spark's.
    auto typed = [&](const std::string& e) {
      // The type's text with bytes that are not UTF-8 as U+FFFD (a JSON round trip), as above.
      const std::string type_sql =
          nlohmann::json::parse(nlohmann::json(result_type.ToSql())
                                    .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
              .get<std::string>();
      return strict ? "spark_json_numbers(" + e + ", " + QuoteLiteral(type_sql) + ")" : e;
    };
    // As a SQL literal ('' for a quote a field name may hold). Bytes that are not UTF-8 become
    // U+FFFD, as Spark decodes its SQL text (dump() threw on them: `sluice sql` aborted; found by
    // pipeline_sql_fuzzer, test FuzzFindingsTest.FromJsonSchemaNotUtf8).
    std::string escaped;
    for (char c : structure.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) {
      escaped += c == '\'' ? std::string("''") : std::string(1, c);
    }
    const std::string quoted = "'" + escaped + "'";
    std::string arg(sql.substr(t.end, schema.begin - t.end));  // "(expr,"
    arg = arg.substr(1, arg.rfind(',') - 1);                   // expr
    std::string x = "(" + arg + ")";
    if (single && !struct_type) {
      std::string replacement = "(CASE WHEN json_valid(" + x + ") THEN " +
                                typed("TRY(json_transform(" + x + ", " + quoted + "))") + " END)";
      out.append(sql.substr(copied, t.begin - copied));
      out.append(replacement);
      copied = (*tokens)[close].end;
      i = close;
      continue;
    }
    std::string invalid =
        typed(has_corrupt ? "json_transform(json_object('" + std::string(kCorruptRecord) + "', " +
                                x + "), " + quoted + ")"
                          : "json_transform('{}', " + quoted + ")");
    // Two parses per value (json_valid, then json_transform). One parse with
    // COALESCE(TRY(json_transform(..)), <validate the NULL results>) saves ~15 % on clean input
    // but DuckDB's TRY re-runs a whole vector row by row when one value in it fails: 7x slower
    // with 1 % malformed values (bench/RESULTS.md "Kafka-fed").
    std::string valid = typed("json_transform(" + x + ", " + quoted + ")");
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

}  // namespace sluice::dialect
