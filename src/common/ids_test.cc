#include "common/ids.h"

#include <type_traits>
#include <unordered_set>

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(IdsTest, DistinctTypes) {
  static_assert(!std::is_convertible_v<BatchId, Version>);
  static_assert(!std::is_convertible_v<int64_t, BatchId>);
  static_assert(!std::is_same_v<BatchId, Offset>);
}

TEST(IdsTest, CompareIncrementHash) {
  BatchId a(3);
  EXPECT_EQ(a.Next(), BatchId(4));
  EXPECT_EQ(a.Prev(), BatchId(2));
  EXPECT_LT(a, BatchId(10));
  ++a;
  EXPECT_EQ(a.value(), 4);
  EXPECT_EQ(a.ToString(), "4");
  std::unordered_set<Version> versions{Version(1), Version(2), Version(1)};
  EXPECT_EQ(versions.size(), 2u);
}

}  // namespace
}  // namespace sluice
