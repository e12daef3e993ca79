#include "plan/token_cursor.h"

#include <gtest/gtest.h>

namespace sluice::plan {
namespace {

TokenCursor CursorOver(std::string_view sql) {
  return TokenCursor(sql, dialect::Tokenize(sql).ValueOrDie());
}

TEST(TokenCursorTest, MatchesKeywordsSymbolsAndIdentifiers) {
  TokenCursor c = CursorOver("REFRESH streaming TABLE \"My T\" ;");
  EXPECT_FALSE(c.Keywords({"refresh", "table"}));  // nothing consumed on a mismatch
  EXPECT_TRUE(c.Keywords({"refresh", "streaming"}));
  EXPECT_TRUE(c.ExpectKeyword("table").ok());
  EXPECT_EQ(c.Identifier().ValueOrDie(), "My T");
  EXPECT_TRUE(c.AtEnd());
  EXPECT_TRUE(c.ExpectEnd().ok());
}

TEST(TokenCursorTest, ErrorsNamePositionExpectationAndFoundToken) {
  TokenCursor c = CursorOver("SHOW\n  tables x");
  c.Next();
  Status s = c.ExpectKeyword("streaming");
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("line 2"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("expected STREAMING, found 'tables'"), std::string::npos)
      << s.ToString();
  c.Next();
  EXPECT_FALSE(c.ExpectEnd().ok());
  EXPECT_FALSE(c.ExpectSymbol("(").ok());
}

}  // namespace
}  // namespace sluice::plan
