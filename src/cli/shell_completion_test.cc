#include "cli/shell_completion.h"

#include <gtest/gtest.h>

namespace sluice::cli {
namespace {

TEST(ShellCompletionTest, KeywordsTakeThePrefixCase) {
  EXPECT_EQ(CompleteWord("SEL", {}), std::vector<std::string>{"SELECT"});
  EXPECT_EQ(CompleteWord("sel", {}), std::vector<std::string>{"select"});
  EXPECT_EQ(CompleteWord("Sel", {}), std::vector<std::string>{"select"});
}

TEST(ShellCompletionTest, NamesKeepTheirSpellingAfterKeywords) {
  const std::vector<std::string> names = {"orders", "Order_Lines", "customers"};
  EXPECT_EQ(CompleteWord("or", names),
            (std::vector<std::string>{"or", "order", "Order_Lines", "orders"}));
  EXPECT_EQ(CompleteWord("cu", names), std::vector<std::string>{"customers"});
  EXPECT_TRUE(CompleteWord("zz", names).empty());
}

TEST(ShellCompletionTest, ANameThatIsAKeywordComesOnce) {
  EXPECT_EQ(CompleteWord("coun", {"count", "country"}),
            (std::vector<std::string>{"count", "country"}));
  EXPECT_EQ(CompleteWord("t", {"t", "t"}).back(), "t");
  EXPECT_EQ(CompleteWord("t1", {"t1", "t1"}), std::vector<std::string>{"t1"});
}

TEST(ShellCompletionTest, EmptyPrefixListsEverything) {
  const auto all = CompleteWord("", {"zeta"});
  ASSERT_GT(all.size(), 50u);
  EXPECT_EQ(all.front(), "ADD");
  EXPECT_EQ(all.back(), "zeta");
}

}  // namespace
}  // namespace sluice::cli
