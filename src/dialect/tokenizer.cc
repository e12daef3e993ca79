#include "dialect/tokenizer.h"

#include <cctype>
#include <cstdint>
#include <string>

namespace sluice::dialect {
namespace {

bool IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80);
}
bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || (c & 0x80);
}
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsOctal(char c) { return c >= '0' && c <= '7'; }

void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Spark's escape at s[j] == '\\' (SparkParserUtils.unescapeSQLString): appends its value to
// `out`, returns the index after it.
size_t SparkEscape(std::string_view s, size_t j, std::string* out) {
  if (j + 1 >= s.size()) {
    *out += '\\';
    return j + 1;
  }
  char n = s[j + 1];
  if (n == 'u' && j + 5 < s.size() && std::isxdigit(static_cast<unsigned char>(s[j + 2])) &&
      std::isxdigit(static_cast<unsigned char>(s[j + 3])) &&
      std::isxdigit(static_cast<unsigned char>(s[j + 4])) &&
      std::isxdigit(static_cast<unsigned char>(s[j + 5]))) {
    AppendUtf8(out,
               static_cast<uint32_t>(std::stoul(std::string(s.substr(j + 2, 4)), nullptr, 16)));
    return j + 6;
  }
  if (n >= '0' && n <= '3' && j + 3 < s.size() && IsOctal(s[j + 2]) && IsOctal(s[j + 3])) {
    *out += static_cast<char>((n - '0') * 64 + (s[j + 2] - '0') * 8 + (s[j + 3] - '0'));
    return j + 4;
  }
  switch (n) {
    case '0':
      *out += '\0';
      break;
    case 'b':
      *out += '\b';
      break;
    case 'n':
      *out += '\n';
      break;
    case 'r':
      *out += '\r';
      break;
    case 't':
      *out += '\t';
      break;
    case 'Z':
      *out += '\x1A';
      break;
    case '%':
      *out += "\\%";
      break;
    case '_':
      *out += "\\_";
      break;
    default:
      *out += n;
      break;
  }
  return j + 2;
}

}  // namespace

bool Token::IsKeyword(std::string_view keyword) const {
  if (kind != TokenKind::kWord || text.size() != keyword.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) !=
        std::tolower(static_cast<unsigned char>(keyword[i]))) {
      return false;
    }
  }
  return true;
}

std::string DescribePosition(std::string_view sql, size_t offset) {
  int line = 1, column = 1;
  for (size_t i = 0; i < offset && i < sql.size(); ++i) {
    if (sql[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

Result<std::vector<Token>> Tokenize(std::string_view s, Lexing lexing) {
  const bool spark = lexing == Lexing::kSpark;
  std::vector<Token> tokens;
  size_t i = 0;
  auto unterminated = [&](size_t at, const char* what) {
    return Status::InvalidArgument(std::string("unterminated ") + what + " starting at " +
                                   DescribePosition(s, at));
  };
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '-' && i + 1 < s.size() && s[i + 1] == '-') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      size_t close = s.find("*/", i + 2);
      if (close == std::string_view::npos) return unterminated(i, "comment");
      i = close + 2;
      continue;
    }
    Token t;
    t.begin = i;
    if (c == '\'' || c == '"' || c == '`') {
      // Spark's "text" is a string literal (spark.sql.ansi.doubleQuotedIdentifiers false).
      t.kind = c == '\'' || (spark && c == '"') ? TokenKind::kString
               : c == '"'                       ? TokenKind::kQuotedIdent
                                                : TokenKind::kBacktick;
      // Its spelling is not the engine's, whose "..." is a name.
      if (spark && c == '"') t.spark_escaped = true;
      // Spark's r'raw' string: the r glued before the quote is part of the literal.
      const bool raw = spark && c != '`' && !tokens.empty() && tokens.back().end == i &&
                       (tokens.back().text == "r" || tokens.back().text == "R") &&
                       tokens.back().kind == TokenKind::kWord;
      if (raw) {
        t.begin = tokens.back().begin;
        tokens.pop_back();
        t.spark_escaped = true;
      }
      const bool escapes = spark && c != '`' && !raw;
      size_t j = i + 1;
      bool closed = false;
      while (j < s.size()) {
        if (escapes && s[j] == '\\') {
          j = SparkEscape(s, j, &t.text);
          t.spark_escaped = true;
          continue;
        }
        if (s[j] == c) {
          if (j + 1 < s.size() && s[j + 1] == c) {
            t.text += c;
            j += 2;
            continue;
          }
          closed = true;
          break;
        }
        t.text += s[j];
        ++j;
      }
      if (!closed) {
        return unterminated(i, c == '\'' || (spark && c == '"') ? "string"
                               : c == '"'                       ? "quoted identifier"
                                                                : "backquoted name");
      }
      i = j + 1;
    } else if (c == '$' && i + 1 < s.size() && !IsDigit(s[i + 1])) {
      size_t j = i + 1;
      while (j < s.size() && IsIdentChar(s[j]) && s[j] != '$') ++j;
      if (j >= s.size() || s[j] != '$') {
        t.kind = TokenKind::kSymbol;
        t.text = "$";
        i += 1;
      } else {
        std::string_view tag = s.substr(i, j - i + 1);
        size_t close = s.find(tag, j + 1);
        if (close == std::string_view::npos) return unterminated(i, "dollar-quoted string");
        t.kind = TokenKind::kString;
        t.text = std::string(s.substr(j + 1, close - j - 1));
        i = close + tag.size();
      }
    } else if (IsIdentStart(c)) {
      size_t j = i;
      while (j < s.size() && IsIdentChar(s[j])) ++j;
      t.kind = TokenKind::kWord;
      t.text = std::string(s.substr(i, j - i));
      i = j;
    } else if (IsDigit(c) || (c == '.' && i + 1 < s.size() && IsDigit(s[i + 1]))) {
      size_t j = i;
      while (j < s.size() && (IsDigit(s[j]) || s[j] == '.' || s[j] == '_')) ++j;
      if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
        size_t k = j + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
        if (k < s.size() && IsDigit(s[k])) {
          j = k;
          while (j < s.size() && IsDigit(s[j])) ++j;
        }
      }
      t.kind = TokenKind::kNumber;
      t.text = std::string(s.substr(i, j - i));
      i = j;
    } else {
      static const char* kTwoChar[] = {"<=", ">=", "<>", "!=", "||", "::", "=>", "->", "==", ":="};
      t.kind = TokenKind::kSymbol;
      t.text = std::string(1, c);
      for (const char* op : kTwoChar) {
        if (s.compare(i, 2, op) == 0) {
          t.text = op;
          break;
        }
      }
      i += t.text.size();
    }
    t.end = i;
    tokens.push_back(std::move(t));
  }
  Token end;
  end.kind = TokenKind::kEnd;
  end.begin = end.end = s.size();
  tokens.push_back(end);
  return tokens;
}

}  // namespace sluice::dialect
