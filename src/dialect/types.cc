#include "dialect/types.h"

#include "common/strings.h"
#include "dialect/token_edits.h"

namespace sluice::dialect {
namespace {

struct TypeName {
  const char* spark;
  const char* engine;
};
constexpr TypeName kTypeNames[] = {
    {"string", "VARCHAR"}, {"binary", "BLOB"}, {"byte", "TINYINT"},
    {"short", "SMALLINT"}, {"long", "BIGINT"}, {"timestamp_ntz", "TIMESTAMP"},
};

Status Expected(const std::vector<Token>& tokens, size_t i, const std::string& what) {
  return Status::InvalidArgument("expected " + what + ", found '" + tokens[i].text + "'");
}

// '>' closing a type; ">>" is two (the tokenizer gives single '>' symbols).
Status Close(const std::vector<Token>& tokens, size_t* i) {
  if (!tokens[*i].IsSymbol(">")) return Expected(tokens, *i, "'>'");
  ++*i;
  return Status::OK();
}

}  // namespace

Result<std::string> ConvertType(const std::vector<Token>& tokens, size_t* i, TypeTarget target) {
  const Token& w = tokens[*i];
  if (w.kind != TokenKind::kWord) return Expected(tokens, *i, "a type");
  ++*i;
  if (w.IsKeyword("array") && tokens[*i].IsSymbol("<")) {
    ++*i;
    SLUICE_ASSIGN_OR_RETURN(std::string element, ConvertType(tokens, i, target));
    SLUICE_RETURN_NOT_OK(Close(tokens, i));
    return element + "[]";
  }
  if (w.IsKeyword("map") && tokens[*i].IsSymbol("<")) {
    ++*i;
    SLUICE_ASSIGN_OR_RETURN(std::string key, ConvertType(tokens, i, target));
    if (!tokens[*i].IsSymbol(",")) return Expected(tokens, *i, "','");
    ++*i;
    SLUICE_ASSIGN_OR_RETURN(std::string value, ConvertType(tokens, i, target));
    SLUICE_RETURN_NOT_OK(Close(tokens, i));
    return "MAP(" + key + ", " + value + ")";
  }
  if (w.IsKeyword("struct") && tokens[*i].IsSymbol("<")) {
    ++*i;
    SLUICE_ASSIGN_OR_RETURN(std::string fields, ConvertFields(tokens, i, true, target));
    SLUICE_RETURN_NOT_OK(Close(tokens, i));
    return "STRUCT(" + fields + ")";
  }
  std::string out = w.text;
  for (const TypeName& n : kTypeNames) {
    if (w.IsKeyword(n.spark) && !(target == TypeTarget::kSchemaText && n.spark[0] == 't')) {
      out = n.engine;
    }
  }
  if (tokens[*i].IsSymbol("(")) {  // DECIMAL(10, 2), VARCHAR(20)
    size_t close = CloseOf(tokens, *i, nullptr);
    if (close == kNoToken) return Expected(tokens, *i, "')'");
    if (w.IsKeyword("varchar") || w.IsKeyword("char")) {
      out = "VARCHAR";
    } else {
      out += "(";
      for (size_t k = *i + 1; k < close; ++k) {
        if (k > *i + 1 && tokens[k].begin > tokens[k - 1].end) out += " ";
        out += tokens[k].kind == TokenKind::kQuotedIdent ? QuoteIdentifier(tokens[k].text)
                                                         : tokens[k].text;
      }
      out += ")";
    }
    *i = close + 1;
  }
  return out;
}

Result<std::string> ConvertFields(const std::vector<Token>& tokens, size_t* i, bool in_struct,
                                  TypeTarget target) {
  std::string out;
  for (;;) {
    const Token& name = tokens[*i];
    if (!IsName(name)) return Expected(tokens, *i, "a field name");
    ++*i;
    if (in_struct && tokens[*i].IsSymbol(":")) ++*i;
    SLUICE_ASSIGN_OR_RETURN(std::string type, ConvertType(tokens, i, target));
    out += QuoteIdentifier(name.text) + " " + type;
    if (tokens[*i].IsKeyword("not") && tokens[*i + 1].IsKeyword("null")) *i += 2;
    if (tokens[*i].IsKeyword("comment") && tokens[*i + 1].kind == TokenKind::kString) *i += 2;
    if (!tokens[*i].IsSymbol(",")) return out;
    out += ", ";
    ++*i;
  }
}

}  // namespace sluice::dialect
