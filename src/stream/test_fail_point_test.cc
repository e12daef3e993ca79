#include "stream/test_fail_point.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace sluice::stream {
namespace {

class FailPointTest : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv(kFailAtEnvVar);
    ResetFailPointCountForTesting();
  }
};

TEST(FailPointSpecTest, Parses) {
  auto one = ParseFailPointSpec("after_sink_write");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->point, "after_sink_write");
  EXPECT_EQ(one->times, 1);
  auto three = ParseFailPointSpec("after_commit_write:3");
  ASSERT_TRUE(three.has_value());
  EXPECT_EQ(three->point, "after_commit_write");
  EXPECT_EQ(three->times, 3);
  EXPECT_FALSE(ParseFailPointSpec("").has_value());
  EXPECT_FALSE(ParseFailPointSpec(":2").has_value());
  EXPECT_FALSE(ParseFailPointSpec("p:0").has_value());
  EXPECT_FALSE(ParseFailPointSpec("p:x").has_value());
  EXPECT_FALSE(ParseFailPointSpec("p:").has_value());
}

TEST_F(FailPointTest, UnsetDoesNothing) {
  unsetenv(kFailAtEnvVar);
  EXPECT_TRUE(MaybeFail("after_sink_write").ok());
}

TEST_F(FailPointTest, FailsTheArmedPointNTimesThenPasses) {
  setenv(kFailAtEnvVar, "after_sink_write:2", 1);
  ResetFailPointCountForTesting();
  EXPECT_TRUE(MaybeFail("after_commit_write").ok());  // another point
  Status first = MaybeFail("after_sink_write");
  EXPECT_TRUE(first.IsIOError());
  EXPECT_EQ(first.message(), "injected failure at after_sink_write (SLUICE_TEST_FAIL_AT, 1 of 2)");
  EXPECT_TRUE(MaybeFail("after_sink_write").IsIOError());
  EXPECT_TRUE(MaybeFail("after_sink_write").ok());
  EXPECT_TRUE(MaybeFail("after_sink_write").ok());
}

TEST_F(FailPointTest, MalformedIsIgnored) {
  setenv(kFailAtEnvVar, "after_sink_write:zero", 1);
  EXPECT_TRUE(MaybeFail("after_sink_write").ok());
}

}  // namespace
}  // namespace sluice::stream
