#include "common/result.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

namespace sluice {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  SLUICE_ASSIGN_OR_RETURN(int half, Half(x));
  SLUICE_ASSIGN_OR_RETURN_CTX(int quarter, Half(half), "second halving");
  return quarter;
}

TEST(ResultTest, HoldsValue) {
  Result<int> r = Half(8);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 4);
  EXPECT_TRUE(r.status().ok());
}

TEST(ResultTest, HoldsError) {
  Result<int> r = Half(3);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument());
  EXPECT_EQ(r.status().message(), "odd: 3");
  EXPECT_EQ(r.ValueOr(-1), -1);
}

TEST(ResultTest, AssignOrReturnPropagatesWithContext) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_EQ(Quarter(3).status().message(), "odd: 3");
  EXPECT_EQ(Quarter(6).status().message(), "second halving: odd: 3");
}

TEST(ResultTest, OkStatusBecomesInternalError) {
  Result<int> r{Status::OK()};
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInternal());
}

TEST(ResultTest, MoveOnlyValue) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).ValueOrDie();
  EXPECT_EQ(*p, 7);
}

TEST(ResultTest, ConvertibleValue) {
  Result<std::string> r = "text";
  EXPECT_EQ(*r, "text");
}

TEST(ResultTest, ReturnNotOkAcceptsResult) {
  auto f = []() -> Status {
    SLUICE_RETURN_NOT_OK(Half(5));
    return Status::OK();
  };
  EXPECT_TRUE(f().IsInvalidArgument());
}

TEST(ResultTest, WithContext) {
  Result<int> r = Half(1);
  EXPECT_EQ(std::move(r).WithContext("ctx").status().message(), "ctx: odd: 1");
}

TEST(ResultDeathTest, ValueOfErrorAborts) {
  Result<int> r = Half(1);
  EXPECT_DEATH((void)r.ValueOrDie(), "ValueOrDie on error");
}

}  // namespace
}  // namespace sluice
