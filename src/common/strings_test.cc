#include "common/strings.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(StringsTest, AsciiLowerLowersOnlyAscii) {
  EXPECT_EQ(AsciiLower("SeLeCt_1"), "select_1");
  EXPECT_EQ(AsciiLower("\xC3\x84"), "\xC3\x84");
  EXPECT_EQ(AsciiLower(""), "");
}

TEST(StringsTest, QuoteIdentifierDoublesQuotes) {
  EXPECT_EQ(QuoteIdentifier("window"), "\"window\"");
  EXPECT_EQ(QuoteIdentifier("a\"b"), "\"a\"\"b\"");
  EXPECT_EQ(QuoteIdentifier(""), "\"\"");
}

}  // namespace
}  // namespace sluice
