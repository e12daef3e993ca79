#include "sql/pipeline_live.h"

#include <vector>

#include "dialect/tokenizer.h"

namespace sluice::sql {

Result<std::string> StripLivePrefix(std::string_view statement) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<dialect::Token> tokens,
                          dialect::Tokenize(statement, dialect::Lexing::kSpark));
  std::string out;
  size_t copied = 0;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    const dialect::Token& t = tokens[i];
    if (t.kind != dialect::TokenKind::kWord || !t.IsKeyword("live") ||
        !tokens[i + 1].IsSymbol(".") || (i > 0 && tokens[i - 1].IsSymbol("."))) {
      continue;
    }
    out.append(statement.substr(copied, t.begin - copied));
    copied = tokens[i + 1].end;
    ++i;
  }
  out.append(statement.substr(copied));
  return out;
}

}  // namespace sluice::sql
