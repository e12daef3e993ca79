#include "dialect/tokenizer.h"

#include <gtest/gtest.h>

namespace sluice::dialect {
namespace {

std::vector<std::string> Texts(std::string_view sql) {
  auto tokens = Tokenize(sql);
  EXPECT_TRUE(tokens.ok()) << tokens.status().ToString();
  std::vector<std::string> out;
  if (!tokens.ok()) return out;
  for (const auto& t : *tokens) {
    if (t.kind != TokenKind::kEnd) out.push_back(t.text);
  }
  return out;
}

TEST(TokenizerTest, WordsSymbolsNumbers) {
  EXPECT_EQ(Texts("SELECT a.b, 1.5e3 FROM t WHERE x <= 2 AND y::INT != 3"),
            (std::vector<std::string>{"SELECT", "a", ".", "b", ",", "1.5e3", "FROM", "t", "WHERE",
                                      "x", "<=", "2", "AND", "y", "::", "INT", "!=", "3"}));
}

TEST(TokenizerTest, QuotesAndComments) {
  auto tokens = *Tokenize("delta.`/data/x y` 'it''s' \"Col\"\"1\" -- c\n/* b */ $$raw$$");
  ASSERT_EQ(tokens.size(), 7u);
  EXPECT_EQ(tokens[2].kind, TokenKind::kBacktick);
  EXPECT_EQ(tokens[2].text, "/data/x y");
  EXPECT_EQ(tokens[3].kind, TokenKind::kString);
  EXPECT_EQ(tokens[3].text, "it's");
  EXPECT_EQ(tokens[4].kind, TokenKind::kQuotedIdent);
  EXPECT_EQ(tokens[4].text, "Col\"1");
  EXPECT_EQ(tokens[5].kind, TokenKind::kString);
  EXPECT_EQ(tokens[5].text, "raw");
  EXPECT_EQ(tokens[6].kind, TokenKind::kEnd);
}

TEST(TokenizerTest, SparkReadsDoubleQuotesAsAString) {
  auto tokens = *Tokenize("\"a\\tb\" \"x\" `n`", Lexing::kSpark);
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[0].kind, TokenKind::kString);
  EXPECT_EQ(tokens[0].text, "a\tb");
  EXPECT_TRUE(tokens[0].spark_escaped);
  EXPECT_EQ(tokens[1].kind, TokenKind::kString);
  EXPECT_EQ(tokens[1].text, "x");
  EXPECT_TRUE(tokens[1].spark_escaped);  // the engine's "x" is a name
  EXPECT_EQ(tokens[2].kind, TokenKind::kBacktick);
  auto r = Tokenize("SELECT \"x", Lexing::kSpark);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "unterminated string starting at line 1, column 8");
}

TEST(TokenizerTest, OffsetsPointIntoTheSource) {
  std::string sql = "UPDATE  t SET v = v + 1";
  auto tokens = *Tokenize(sql);
  EXPECT_EQ(sql.substr(tokens[1].begin, tokens[1].end - tokens[1].begin), "t");
  EXPECT_EQ(sql.substr(tokens[5].begin), "v + 1");
}

TEST(TokenizerTest, UnterminatedIsAnErrorWithPosition) {
  auto r = Tokenize("SELECT\n  'abc");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "unterminated string starting at line 2, column 3");
  EXPECT_FALSE(Tokenize("/* x").ok());
  EXPECT_FALSE(Tokenize("\"x").ok());
}

TEST(TokenizerTest, KeywordMatchIgnoresCase) {
  auto tokens = *Tokenize("Merge");
  EXPECT_TRUE(tokens[0].IsKeyword("MERGE"));
  EXPECT_FALSE(tokens[0].IsKeyword("MERGED"));
}

}  // namespace
}  // namespace sluice::dialect
