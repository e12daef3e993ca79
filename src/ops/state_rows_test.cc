#include "ops/state_rows.h"

#include <gtest/gtest.h>

namespace sluice::ops {
namespace {

TEST(StateRowsTest, KeysShareTheGroupPrefixAndSortByStart) {
  std::string a = StateKey("grp", -5);
  std::string b = StateKey("grp", 0);
  std::string c = StateKey("grp", 7);
  EXPECT_EQ(a.substr(0, StateKeyPrefix("grp").size()), StateKeyPrefix("grp"));
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  // A group key that is a prefix of another still has its own prefix (the length comes first).
  EXPECT_NE(StateKey("gr", 0).substr(0, StateKeyPrefix("grp").size()), StateKeyPrefix("grp"));
}

TEST(StateRowsTest, ValueRoundTrip) {
  const std::string value = StateValue(15000000, "row-bytes");  // the parse views into it
  auto v = ParseStateValue(value);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->evict_us, 15000000);
  EXPECT_EQ(v->row, "row-bytes");
  const std::string never_value = StateValue(kNeverEvicted, "");
  auto never = ParseStateValue(never_value);
  ASSERT_TRUE(never.ok());
  EXPECT_EQ(never->evict_us, kNeverEvicted);
  EXPECT_EQ(ParseStateValue("short").status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace sluice::ops
