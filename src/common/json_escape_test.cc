#include "common/json_escape.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace sluice {
namespace {

// The escape of one byte, written plainly from the header's rules.
std::string ReferenceByte(unsigned char c, JsonEscape style) {
  switch (c) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    case '\b':
      return "\\b";
    case '\f':
      return "\\f";
    default:
      break;
  }
  if (c < 0x20 || (c >= 0x7F && style == JsonEscape::kAscii)) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "\\u%04x", c);
    return buf;
  }
  return std::string(1, static_cast<char>(c));
}

std::string Reference(std::string_view s, JsonEscape style) {
  std::string out = "\"";
  for (char c : s) out += ReferenceByte(static_cast<unsigned char>(c), style);
  return out + "\"";
}

// WriteJsonString into a buffer of exactly the promised room, with guard bytes after it.
std::string Written(std::string_view s, JsonEscape style) {
  const size_t room = 2 + kMaxJsonEscapedBytesPerByte * s.size();
  std::vector<char> buf(room + 8, '#');
  const char* end = WriteJsonString(s, style, buf.data());
  EXPECT_LE(static_cast<size_t>(end - buf.data()), room);
  for (size_t i = room; i < buf.size(); ++i) EXPECT_EQ(buf[i], '#') << "wrote past the room";
  return std::string(buf.data(), static_cast<size_t>(end - buf.data()));
}

TEST(JsonEscapeTest, ExamplesOfBothStyles) {
  for (JsonEscape style : {JsonEscape::kMinimal, JsonEscape::kAscii}) {
    EXPECT_EQ(JsonQuoted("", style), "\"\"");
    EXPECT_EQ(JsonQuoted("plain text/with slash", style), "\"plain text/with slash\"");
    EXPECT_EQ(JsonQuoted("a\"b\\c", style), "\"a\\\"b\\\\c\"");
    EXPECT_EQ(JsonQuoted("\n\r\t\b\f", style), "\"\\n\\r\\t\\b\\f\"");
    EXPECT_EQ(JsonQuoted(std::string_view("\x00\x01\x1f", 3), style), "\"\\u0000\\u0001\\u001f\"");
  }
  // Jackson (Spark's to_json): UTF-8 and DEL as they are.
  EXPECT_EQ(JsonQuoted("caf\xc3\xa9\x7f", JsonEscape::kMinimal), "\"caf\xc3\xa9\x7f\"");
  // Python's json.dumps (ensure_ascii): DEL and high bytes as \u00XX.
  EXPECT_EQ(JsonQuoted("caf\xc3\xa9\x7f", JsonEscape::kAscii), "\"caf\\u00c3\\u00a9\\u007f\"");
}

TEST(JsonEscapeTest, EveryByteAtEveryPositionMatchesTheReference) {
  // Lengths around the 16-byte blocks of the fast check.
  for (JsonEscape style : {JsonEscape::kMinimal, JsonEscape::kAscii}) {
    for (int b = 0; b < 256; ++b) {
      for (size_t len : {1, 2, 15, 16, 17, 31, 32, 33}) {
        for (size_t pos = 0; pos < len; ++pos) {
          std::string s(len, 'x');
          s[pos] = static_cast<char>(b);
          const std::string want = Reference(s, style);
          ASSERT_EQ(Written(s, style), want) << "byte " << b << " at " << pos << " of " << len;
          std::string appended = "prefix";
          AppendJsonString(s, style, &appended);
          ASSERT_EQ(appended, "prefix" + want) << "byte " << b << " at " << pos << " of " << len;
        }
      }
    }
  }
}

TEST(JsonEscapeTest, EscapedWithoutQuotesAndAllSpecialWithinRoom) {
  const std::string all_special(40, '\x01');  // every byte at its longest escape
  std::string out(kMaxJsonEscapedBytesPerByte * all_special.size(), '#');
  const char* end = WriteJsonEscaped(all_special, JsonEscape::kAscii, out.data());
  EXPECT_EQ(static_cast<size_t>(end - out.data()), out.size());
  std::string want;
  for (size_t i = 0; i < all_special.size(); ++i) want += "\\u0001";
  EXPECT_EQ(out, want);
  char none[1] = {'#'};
  EXPECT_EQ(WriteJsonEscaped("", JsonEscape::kMinimal, none), none);
  EXPECT_EQ(none[0], '#');
}

}  // namespace
}  // namespace sluice
