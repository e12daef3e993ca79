// Spark's `:` path into a VARIANT made by parse_json (rules.h):
//
//   Spark                              rewritten to                          why
//   parse_json(j):a.b[0]::INT          CAST(json_extract(j, '$.a.b[0]') ...  DuckDB has no VARIANT;
//                                      (the cast rule keeps ::INT)           JSON and its paths
//                                      serve
//   parse_json(j):a::STRING            json_extract_string(j, '$.a')         the text, unquoted
//   parse_json(j):a['k']               json_extract(j, '$.a."k"')
//
//   variant_get(parse_json(j),         CAST(json_extract_string(j, '$.a')    the value at the path
//     '$.a', 'INT')                      AS INTEGER)                         as the type (try_:
//                                                                          TRY_CAST, NULL)
//   parse_json(j) elsewhere            json(j)                               VARIANT is JSON text
//   try_parse_json(j)                  spark_try_parse_json(j)               NULL when not JSON
//
// Only the path of a parse_json(...) call is rewritten: Spark refuses `:` on a STRING column
// (j:a), and so does the engine's parser. A path element is a name, `.name`, `[n]` or `['key']`.
#include <cctype>
#include <string>

#include "dialect/rules.h"
#include "dialect/types.h"

namespace sluice::dialect {
namespace {

// A JSONPath member: $.name, or $."na me" for other names.
std::string Member(const std::string& name) {
  bool plain = !name.empty();
  for (char c : name) {
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  }
  if (plain) return "." + name;
  std::string quoted = ".\"";
  for (char c : name) quoted += c == '"' ? std::string("\\\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

void RewriteJsonPaths(std::string_view sql, const std::vector<Token>& tokens,
                      std::vector<Edit>* edits) {
  for (size_t i = 0; tokens[i].kind != TokenKind::kEnd; ++i) {
    const bool try_get = IsCall(tokens, i, "try_variant_get");
    if (try_get || IsCall(tokens, i, "variant_get")) {
      // variant_get(parse_json(j), 'path', 'type'): the text at the path cast to the type.
      std::vector<size_t> commas;
      const size_t close = CloseOf(tokens, i + 1, &commas);
      if (close == kNoToken || commas.size() != 2 || !IsCall(tokens, i + 2, "parse_json") ||
          CloseOf(tokens, i + 3, nullptr) + 1 != commas[0] ||
          tokens[commas[0] + 1].kind != TokenKind::kString || commas[0] + 2 != commas[1] ||
          tokens[commas[1] + 1].kind != TokenKind::kString || commas[1] + 2 != close) {
        continue;
      }
      auto type_tokens = Tokenize(tokens[commas[1] + 1].text);
      if (!type_tokens.ok()) continue;
      size_t k = 0;
      auto type = ConvertType(*type_tokens, &k);
      if (!type.ok() || (*type_tokens)[k].kind != TokenKind::kEnd) continue;
      const std::string arg(
          sql.substr(tokens[i + 4].begin, tokens[commas[0] - 1].begin - tokens[i + 4].begin));
      const std::string& path = tokens[commas[0] + 1].text;
      std::string quoted_path = "'";
      for (char c : path) quoted_path += c == '\'' ? std::string("''") : std::string(1, c);
      edits->push_back({tokens[i].begin, tokens[close].end,
                        std::string(try_get ? "TRY_CAST(" : "CAST(") + "json_extract_string(" +
                            arg + ", " + quoted_path + "') AS " + *type + ")"});
      i = close;
      continue;
    }
    if (IsCall(tokens, i, "try_parse_json")) {
      edits->push_back({tokens[i].begin, tokens[i].end, "spark_try_parse_json"});
      continue;
    }
    if (!IsCall(tokens, i, "parse_json")) continue;
    size_t close = CloseOf(tokens, i + 1, nullptr);
    if (close == kNoToken) continue;
    if (!tokens[close + 1].IsSymbol(":") || !IsName(tokens[close + 2])) {
      // A VARIANT as JSON text; parse_json(j)['k'] stays unknown (Spark refuses subscripts of a
      // VARIANT, the engine's JSON would answer).
      if (!tokens[close + 1].IsSymbol("["))
        edits->push_back({tokens[i].begin, tokens[i].end, "json"});
      continue;
    }
    std::string path = "$" + Member(tokens[close + 2].text);
    size_t k = close + 3;
    for (;;) {
      if (tokens[k].IsSymbol(".") && IsName(tokens[k + 1])) {
        path += Member(tokens[k + 1].text);
        k += 2;
      } else if (tokens[k].IsSymbol("[") && tokens[k + 1].kind == TokenKind::kNumber &&
                 tokens[k + 2].IsSymbol("]")) {
        path += "[" + tokens[k + 1].text + "]";
        k += 3;
      } else if (tokens[k].IsSymbol("[") && tokens[k + 1].kind == TokenKind::kString &&
                 tokens[k + 2].IsSymbol("]")) {
        path += Member(tokens[k + 1].text);
        k += 3;
      } else {
        break;
      }
    }
    // The argument's text as written (its own rewrites are not applied: a parse_json argument is
    // a column or a literal).
    std::string arg(sql.substr(tokens[i + 2].begin, tokens[close].begin - tokens[i + 2].begin));
    const bool as_string =
        tokens[k].IsSymbol("::") &&
        (tokens[k + 1].IsKeyword("string") || tokens[k + 1].IsKeyword("varchar")) &&
        !tokens[k + 2].IsSymbol("(") && !tokens[k + 2].IsSymbol("[");
    const size_t end = as_string ? k + 2 : k;
    edits->push_back({tokens[i].begin, tokens[end - 1].end,
                      std::string(as_string ? "json_extract_string(" : "json_extract(") + arg +
                          ", " + "'" + path + "')"});
    i = end - 1;
  }
}

}  // namespace sluice::dialect
