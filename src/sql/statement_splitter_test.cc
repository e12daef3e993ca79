#include "sql/statement_splitter.h"

#include <gtest/gtest.h>

namespace sluice::sql {
namespace {

std::vector<std::string> Texts(std::string_view script) {
  std::vector<std::string> out;
  for (const auto& s : SplitStatements(script)) out.push_back(s.text);
  return out;
}

TEST(StatementSplitterTest, SplitsAtTopLevelSemicolons) {
  EXPECT_EQ(Texts("SELECT 1; SELECT 2;"), (std::vector<std::string>{"SELECT 1", "SELECT 2"}));
  EXPECT_EQ(Texts("SELECT 1"), (std::vector<std::string>{"SELECT 1"}));
  EXPECT_EQ(Texts("  ;; ; "), (std::vector<std::string>{}));
}

TEST(StatementSplitterTest, IgnoresSemicolonsInQuotesAndComments) {
  EXPECT_EQ(Texts("SELECT 'a;b'; SELECT \"x;y\" FROM t"),
            (std::vector<std::string>{"SELECT 'a;b'", "SELECT \"x;y\" FROM t"}));
  EXPECT_EQ(Texts("SELECT 'it''s;' ; SELECT 2"),
            (std::vector<std::string>{"SELECT 'it''s;'", "SELECT 2"}));
  EXPECT_EQ(Texts("SELECT 1 -- a; comment\n; SELECT /* ; */ 2"),
            (std::vector<std::string>{"SELECT 1 -- a; comment", "SELECT /* ; */ 2"}));
  EXPECT_EQ(Texts("SELECT $$a;b$$; SELECT $t$;$t$"),
            (std::vector<std::string>{"SELECT $$a;b$$", "SELECT $t$;$t$"}));
}

TEST(StatementSplitterTest, DropsCommentOnlyStatements) {
  EXPECT_EQ(Texts("-- just a comment\n; /* another */ ; SELECT 1"),
            (std::vector<std::string>{"SELECT 1"}));
}

TEST(StatementSplitterTest, ReportsLineOfFirstCharacter) {
  auto statements = SplitStatements("SELECT 1;\n\n  SELECT\n 2;\nSELECT 'a\nb'; SELECT 4", 10);
  ASSERT_EQ(statements.size(), 4u);
  EXPECT_EQ(statements[0].line, 10);
  EXPECT_EQ(statements[1].line, 12);
  EXPECT_EQ(statements[2].line, 14);
  EXPECT_EQ(statements[3].line, 15);
}

TEST(StatementSplitterTest, IncompleteInput) {
  EXPECT_TRUE(IsIncomplete("SELECT 1"));
  EXPECT_FALSE(IsIncomplete("SELECT 1;"));
  EXPECT_FALSE(IsIncomplete("SELECT 1; -- trailing comment"));
  EXPECT_TRUE(IsIncomplete("SELECT 'abc;"));
  EXPECT_TRUE(IsIncomplete("SELECT 1; /* open comment"));
  EXPECT_FALSE(IsIncomplete(""));
  EXPECT_FALSE(IsIncomplete("   \n"));
}

}  // namespace
}  // namespace sluice::sql
