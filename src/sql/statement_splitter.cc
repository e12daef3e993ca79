#include "sql/statement_splitter.h"

#include <cctype>

namespace sluice::sql {
namespace {

bool IsBlank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Scanner state shared by SplitStatements and IsIncomplete.
struct Scan {
  std::vector<StatementText> statements;
  bool in_open_construct = false;  // ended inside a quote or block comment
  bool trailing_content = false;   // non-comment text after the last ';'
};

// True when [begin, end) holds something other than whitespace and comments.
bool HasContent(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (IsBlank(s[i])) {
      ++i;
    } else if (s.compare(i, 2, "--") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (s.compare(i, 2, "/*") == 0) {
      size_t close = s.find("*/", i + 2);
      if (close == std::string_view::npos) return false;
      i = close + 2;
    } else {
      return true;
    }
  }
  return false;
}

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && IsBlank(s[b])) ++b;
  while (e > b && IsBlank(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

Scan Run(std::string_view s, int first_line) {
  Scan scan;
  size_t start = 0;
  int line = first_line;
  int start_line = first_line;
  auto emit = [&](size_t end) {
    std::string_view piece = s.substr(start, end - start);
    if (HasContent(piece)) {
      // Line of the first non-blank character.
      int l = start_line;
      for (size_t k = 0; k < piece.size() && IsBlank(piece[k]); ++k) {
        if (piece[k] == '\n') ++l;
      }
      scan.statements.push_back({Trim(piece), l});
    }
  };
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == '\'' || c == '"') {
      // Spark's lexing (dialect/tokenizer.h): a backslash escapes in '...' and "..." (both
      // string literals) unless r'raw'.
      const bool escapes = !(i > 0 && (s[i - 1] == 'r' || s[i - 1] == 'R'));
      size_t j = i + 1;
      bool closed = false;
      while (j < s.size()) {
        if (s[j] == '\n') ++line;
        if (escapes && s[j] == '\\' && j + 1 < s.size()) {
          if (s[j + 1] == '\n') ++line;
          j += 2;
          continue;
        }
        if (s[j] == c) {
          if (j + 1 < s.size() && s[j + 1] == c) {
            j += 2;  // doubled quote escapes itself
            continue;
          }
          closed = true;
          break;
        }
        ++j;
      }
      if (!closed) {
        scan.in_open_construct = true;
        i = s.size();
        break;
      }
      i = j + 1;
    } else if (c == '-' && i + 1 < s.size() && s[i + 1] == '-') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      size_t close = s.find("*/", i + 2);
      if (close == std::string_view::npos) {
        scan.in_open_construct = true;
        i = s.size();
        break;
      }
      for (size_t k = i; k < close; ++k) {
        if (s[k] == '\n') ++line;
      }
      i = close + 2;
    } else if (c == '$') {
      // $tag$ ... $tag$ where tag is [A-Za-z0-9_]*; a lone '$' (e.g. $1 parameter) is text.
      size_t j = i + 1;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      if (j < s.size() && s[j] == '$' &&
          !(j > i + 1 && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
        std::string_view tag = s.substr(i, j - i + 1);
        size_t close = s.find(tag, j + 1);
        if (close == std::string_view::npos) {
          scan.in_open_construct = true;
          i = s.size();
          break;
        }
        for (size_t k = i; k < close; ++k) {
          if (s[k] == '\n') ++line;
        }
        i = close + tag.size();
      } else {
        ++i;
      }
    } else if (c == ';') {
      emit(i);
      ++i;
      start = i;
      start_line = line;
    } else {
      ++i;
    }
  }
  if (!scan.in_open_construct) {
    scan.trailing_content = HasContent(s.substr(start));
    emit(s.size());
  } else {
    scan.trailing_content = true;
    emit(s.size());
  }
  return scan;
}

}  // namespace

std::vector<StatementText> SplitStatements(std::string_view script, int first_line) {
  return Run(script, first_line).statements;
}

bool IsIncomplete(std::string_view text) {
  Scan scan = Run(text, 1);
  return scan.in_open_construct || scan.trailing_content;
}

}  // namespace sluice::sql
