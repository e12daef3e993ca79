// sluice_row_listed (row_lists.h): membership of (entry, row) in constant range lists, in any
// order of rows and across threads, and the errors for lists that are not well formed.
#include <gtest/gtest.h>

#include <string>

#include "engine/test_util.h"

namespace sluice::engine {
namespace {

class RowListsTest : public testing::EngineTest {
 protected:
  std::string Error(const std::string& sql) {
    auto r = conn_->Query(sql);
    EXPECT_FALSE(r.ok()) << sql;
    return r.ok() ? std::string() : r.status().message();
  }
};

TEST_F(RowListsTest, ListedRowsOfEachEntry) {
  const std::string lists = "'0:0-0,7-9,100-100;2:;5:3-4'";
  auto listed = [&](const std::string& e, const std::string& r) {
    return Scalar("SELECT sluice_row_listed(" + e + ", " + r + ", " + lists + ")");
  };
  EXPECT_EQ(listed("0", "0"), "true");
  EXPECT_EQ(listed("0", "1"), "false");
  EXPECT_EQ(listed("0", "8"), "true");
  EXPECT_EQ(listed("0", "10"), "false");
  EXPECT_EQ(listed("0", "100"), "true");
  EXPECT_EQ(listed("0", "101"), "false");
  EXPECT_EQ(listed("2", "0"), "false");  // listed with no ranges
  EXPECT_EQ(listed("1", "0"), "false");  // not listed
  EXPECT_EQ(listed("5", "4"), "true");
  EXPECT_EQ(listed("NULL", "4"), "NULL");
  EXPECT_EQ(listed("5", "NULL"), "NULL");
  EXPECT_EQ(Scalar("SELECT sluice_row_listed(0, 0, '')"), "false");
}

TEST_F(RowListsTest, RowsInAnyOrderAndManyThreadsAgreeWithAJoin) {
  // Three entries of 300,000 rows; entry e lists every (7 + e)-th row and a run; rows shuffled
  // within each entry by a second pass in descending order.
  std::string lists;
  for (int e = 0; e < 3; ++e) {
    lists += (e ? ";" : "") + std::to_string(e) + ":";
    bool first = true;
    for (int r = 0; r < 300000; r += 7 + e) {
      if (r >= 1000 && r < 5000) continue;
      lists += (first ? "" : ",") + std::to_string(r) + "-" + std::to_string(r);
      first = false;
    }
    lists += ",1000000-1000010";  // beyond the rows
  }
  const std::string rows =
      "(SELECT e, r FROM range(3) a(e), range(300000) b(r) UNION ALL "
      "SELECT e, 299999 - r FROM range(3) a(e), range(300000) b(r))";
  const std::string want =
      "SELECT count(*) FROM " + rows +
      " WHERE (r % (7 + e) = 0 AND NOT (r >= 1000 AND r < 5000)) OR r BETWEEN 1000000 AND 1000010";
  const std::string got =
      "SELECT count(*) FROM " + rows + " WHERE sluice_row_listed(e, r, '" + lists + "')";
  EXPECT_EQ(Scalar(got), Scalar(want));
  EXPECT_NE(Scalar(got), "0");
}

TEST_F(RowListsTest, BadListsAreRefusedWithTheOffset) {
  EXPECT_NE(Error("SELECT sluice_row_listed(0, 0, '0:5-3')").find("ends before it starts"),
            std::string::npos);
  EXPECT_NE(Error("SELECT sluice_row_listed(0, 0, '0:5-6,6-7')").find("not after"),
            std::string::npos);
  EXPECT_NE(Error("SELECT sluice_row_listed(0, 0, '0:1-1;0:2-2')").find("listed twice"),
            std::string::npos);
  EXPECT_NE(Error("SELECT sluice_row_listed(0, 0, '0:1-x')").find("expected a number at offset 4"),
            std::string::npos);
  EXPECT_NE(Error("SELECT sluice_row_listed(0, 0, '0 1-2')").find("expected ':' at offset 1"),
            std::string::npos);
  EXPECT_NE(Error("SELECT sluice_row_listed(0, 0, '0:-1-2')").find("expected a number"),
            std::string::npos);
  EXPECT_NE(
      Error("SELECT sluice_row_listed(0, 0, '0:99999999999999999999-1')").find("out of range"),
      std::string::npos);
  EXPECT_NE(Error("SELECT sluice_row_listed(range, 0, range::VARCHAR) FROM range(2)")
                .find("must be a constant"),
            std::string::npos);
}

}  // namespace
}  // namespace sluice::engine
