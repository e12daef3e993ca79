// 4 processes x 250 appends to one table: exactly 1,000 commits and rows, none lost (label: slow).
#include <gtest/gtest.h>

#include "delta/append_race_util.h"
#include "delta/writer_test_util.h"

namespace sluice::delta {
namespace {

class CommitSlowTest : public testing::WriterTestBase {};

TEST_F(CommitSlowTest, FourProcessesTimes250Appends) {
  auto w = Writer();
  ASSERT_TRUE(w->CreateTable(Sql("SELECT 1::BIGINT AS id, 1 AS proc").schema()).ok());
  testing::RunAppendProcesses(table_, 4, 250);
  testing::CheckConcurrentAppends(table_, 4, 250, engine_);
  EXPECT_EQ(ValidateLog(), 1000);
}

}  // namespace
}  // namespace sluice::delta
