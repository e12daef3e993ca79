#include "sql/kafka_batch_read.h"

#include "common/secret_reference.h"
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
      // A name: a word, a dotted name (kafka.isolation.level) or one in backticks, as Databricks
      // writes an option with dots (`kafka.sasl.jaas.config`).
      std::string name;
      size_t k = j;
      if (tokens[k].kind == dialect::TokenKind::kBacktick) {
        name = tokens[k++].text;
      } else if (tokens[k].kind == dialect::TokenKind::kWord) {
        name = tokens[k++].text;
        while (tokens[k].IsSymbol(".") && tokens[k + 1].kind == dialect::TokenKind::kWord) {
          name += "." + tokens[k + 1].text;
          k += 2;
        }
      }
      if (name.empty() || !tokens[k].IsSymbol("=>")) {
        return Status::InvalidArgument(
            "read_kafka takes named arguments only, such as read_kafka(bootstrapServers => "
            "'host:9092', subscribe => 'topic', `kafka.isolation.level` => 'read_committed') "
            "(at " +
            where + ")");
      }
      j = k + 1;
      std::string value;
      if (tokens[j].IsKeyword("secret") && tokens[j + 1].IsSymbol("(")) {
        // secret('scope', 'key'): resolved below (common/secret_reference.h).
        const size_t begin = tokens[j].begin;
        while (tokens[j].kind != dialect::TokenKind::kEnd && !tokens[j].IsSymbol(")")) ++j;
        if (tokens[j].kind == dialect::TokenKind::kEnd) {
          return Status::InvalidArgument("read_kafka: unterminated secret(...) for argument '" +
                                         name + "' (at " + where + ")");
        }
        value = std::string(sql.substr(begin, tokens[j].end - begin));
        ++j;
      } else if (tokens[j].kind == dialect::TokenKind::kString ||
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
    SLUICE_ASSIGN_OR_RETURN_CTX(ref.options, ResolveSecretReferences(ref.options),
                                "read_kafka (at " + where + ")");
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
