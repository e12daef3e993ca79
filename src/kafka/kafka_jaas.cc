#include "kafka/kafka_jaas.h"

#include "common/strings.h"

namespace sluice::kafka {

namespace {

Status Malformed(const std::string& what, size_t pos) {
  return Status::InvalidArgument("option 'kafka.sasl.jaas.config': " + what + " at position " +
                                 std::to_string(pos + 1));
}

bool IsWordStart(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '-' ||
         c >= 0xA0;
}
bool IsWordChar(unsigned char c) { return IsWordStart(c) || (c >= '0' && c <= '9') || c == '.'; }

struct Token {
  enum Kind { kWord, kQuoted, kEquals, kSemicolon, kEnd } kind = kEnd;
  std::string text;
  size_t pos = 0;
};

class Tokenizer {
 public:
  explicit Tokenizer(std::string_view s) : s_(s) {}

  Result<Token> Next() {
    SLUICE_RETURN_NOT_OK(SkipSpaceAndComments());
    Token t;
    t.pos = i_;
    if (i_ >= s_.size()) return t;
    unsigned char c = static_cast<unsigned char>(s_[i_]);
    if (c == '=' || c == ';') {
      ++i_;
      t.kind = c == '=' ? Token::kEquals : Token::kSemicolon;
      return t;
    }
    if (c == '"' || c == '\'') return Quoted(static_cast<char>(c));
    if (IsWordStart(c)) {
      t.kind = Token::kWord;
      while (i_ < s_.size() && IsWordChar(static_cast<unsigned char>(s_[i_]))) t.text += s_[i_++];
      return t;
    }
    if ((c >= '0' && c <= '9') || c == '.') {
      // The Java tokenizer reads a number here, which the Kafka client takes as no value.
      return Malformed("an unquoted token starting with a digit or '.' (quote it)", i_);
    }
    return Malformed("an unexpected character", i_);
  }

 private:
  Status SkipSpaceAndComments() {
    while (i_ < s_.size()) {
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c <= ' ') {
        ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '*') {
        size_t end = s_.find("*/", i_ + 2);
        if (end == std::string_view::npos) return Malformed("an unterminated /* comment", i_);
        i_ = end + 2;
      } else if (c == '/') {  // "//" or a lone '/': a comment to the end of the line
        while (i_ < s_.size() && s_[i_] != '\n' && s_[i_] != '\r') ++i_;
      } else {
        break;
      }
    }
    return Status::OK();
  }

  // A quoted string with java.io.StreamTokenizer's escapes.
  Result<Token> Quoted(char quote) {
    Token t;
    t.kind = Token::kQuoted;
    t.pos = i_;
    ++i_;
    for (;;) {
      if (i_ >= s_.size() || s_[i_] == '\n' || s_[i_] == '\r') {
        return Malformed("an unterminated quoted value", t.pos);
      }
      char c = s_[i_++];
      if (c == quote) return t;
      if (c != '\\') {
        t.text += c;
        continue;
      }
      if (i_ >= s_.size()) return Malformed("an unterminated quoted value", t.pos);
      char e = s_[i_++];
      switch (e) {
        case 'a':
          t.text += '\a';
          break;
        case 'b':
          t.text += '\b';
          break;
        case 'f':
          t.text += '\f';
          break;
        case 'n':
          t.text += '\n';
          break;
        case 'r':
          t.text += '\r';
          break;
        case 't':
          t.text += '\t';
          break;
        case 'v':
          t.text += '\v';
          break;
        default:
          if (e >= '0' && e <= '7') {
            // Up to three octal digits; three only when the first is 0-3 (the value fits a byte).
            int v = e - '0';
            int max_digits = e <= '3' ? 3 : 2;
            for (int d = 1; d < max_digits && i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '7';
                 ++d) {
              v = v * 8 + (s_[i_++] - '0');
            }
            t.text += static_cast<char>(v);
          } else {
            t.text += e;
          }
      }
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

Result<JaasEntry> ParseJaasConfig(std::string_view text) {
  Tokenizer tok(text);
  JaasEntry out;
  SLUICE_ASSIGN_OR_RETURN(Token module, tok.Next());
  if (module.kind == Token::kEnd) {
    return Status::InvalidArgument(
        "option 'kafka.sasl.jaas.config' names no login module (expected '<LoginModule class> "
        "required username=\"...\" password=\"...\";')");
  }
  if (module.kind != Token::kWord && module.kind != Token::kQuoted) {
    return Malformed("a login module class name expected", module.pos);
  }
  out.login_module = module.text;
  SLUICE_ASSIGN_OR_RETURN(Token flag, tok.Next());
  std::string lower = AsciiLower(flag.text);
  if (flag.kind != Token::kWord || (lower != "required" && lower != "requisite" &&
                                    lower != "sufficient" && lower != "optional")) {
    return Malformed(
        "the control flag (required, requisite, sufficient or optional) expected after the "
        "login module",
        flag.pos);
  }
  out.control_flag = lower;
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(Token key, tok.Next());
    if (key.kind == Token::kSemicolon) break;
    if (key.kind == Token::kEnd) {
      return Malformed("the entry is not terminated by ';' (the Kafka client requires it)",
                       key.pos);
    }
    if (key.kind != Token::kWord && key.kind != Token::kQuoted) {
      return Malformed("an option name expected", key.pos);
    }
    SLUICE_ASSIGN_OR_RETURN(Token eq, tok.Next());
    if (eq.kind != Token::kEquals) {
      // The token is not named: it may be a misplaced value.
      return Malformed("'=' expected after an option name", eq.pos);
    }
    SLUICE_ASSIGN_OR_RETURN(Token value, tok.Next());
    if (value.kind != Token::kWord && value.kind != Token::kQuoted) {
      return Malformed("no value for the option '" + key.text + "'", value.pos);
    }
    out.options[key.text] = std::move(value.text);
  }
  SLUICE_ASSIGN_OR_RETURN(Token rest, tok.Next());
  if (rest.kind != Token::kEnd) {
    return Malformed(
        "text after the first entry's ';' (the Kafka client takes exactly one login module)",
        rest.pos);
  }
  return out;
}

}  // namespace sluice::kafka
