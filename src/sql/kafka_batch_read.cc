#include "sql/kafka_batch_read.h"

#include "common/strings.h"
#include "dialect/tokenizer.h"

namespace sluice::sql {

Result<KafkaBatchRewrite> RewriteKafkaBatchReads(std::string_view sql) {
  KafkaBatchRewrite out;
  SLUICE_ASSIGN_OR_RETURN(std::vector<dialect::Token> tokens, dialect::Tokenize(sql));
  size_t copied = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!tokens[i].IsKeyword("read_kafka")) continue;
    if (i + 1 >= tokens.size() || !tokens[i + 1].IsSymbol("(")) continue;
    if (i > 0 && tokens[i - 1].IsKeyword("stream")) continue;  // a streaming read
    const std::string where = dialect::DescribePosition(sql, tokens[i].begin);
    KafkaBatchReference ref;
    size_t j = i + 2;
    while (!tokens[j].IsSymbol(")")) {
      if (tokens[j].kind == dialect::TokenKind::kEnd ||
          tokens[j + 1].kind == dialect::TokenKind::kEnd) {
        return Status::InvalidArgument("read_kafka: unterminated argument list (at " + where + ")");
      }
      const bool named =
          tokens[j].kind == dialect::TokenKind::kWord && tokens[j + 1].IsSymbol("=>");
      if (!named) {
        return Status::InvalidArgument(
            "read_kafka takes named arguments only, such as read_kafka(bootstrapServers => "
            "'host:9092', subscribe => 'topic') (at " +
            where + ")");
      }
      const std::string name = tokens[j].text;
      j += 2;
      std::string value;
      if (tokens[j].kind == dialect::TokenKind::kString ||
          tokens[j].kind == dialect::TokenKind::kNumber ||
          tokens[j].kind == dialect::TokenKind::kWord) {
        value = tokens[j].text;
        ++j;
      } else if (tokens[j].IsSymbol("-") && tokens[j].kind != dialect::TokenKind::kEnd &&
                 tokens[j + 1].kind == dialect::TokenKind::kNumber) {
        value = "-" + tokens[j + 1].text;
        j += 2;
      } else {
        return Status::InvalidArgument("read_kafka: argument '" + name +
                                       "' must be a literal (at " + where + ")");
      }
      for (const auto& [existing, v] : ref.options) {
        if (AsciiLower(existing) == AsciiLower(name)) {
          return Status::InvalidArgument("read_kafka: argument '" + name + "' is given twice (at " +
                                         where + ")");
        }
      }
      ref.options[name] = value;
      if (tokens[j].IsSymbol(",")) {
        ++j;
      } else if (!tokens[j].IsSymbol(")")) {
        return Status::InvalidArgument("read_kafka: expected , or ) after argument '" + name +
                                       "' (at " + where + ")");
      }
    }
    ref.view_name = "read_kafka:" + std::to_string(out.references.size());
    out.sql += std::string(sql.substr(copied, tokens[i].begin - copied));
    out.sql += QuoteIdentifier(ref.view_name);
    copied = tokens[j].end;
    out.references.push_back(std::move(ref));
    i = j;
  }
  out.sql += std::string(sql.substr(copied));
  return out;
}

}  // namespace sluice::sql
