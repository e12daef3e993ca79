// sql/state_decoder.h on the layouts it knows by their operator name: globalLimit's one count
// (a streaming table with LIMIT, read back through read_state), and a damaged key or value of it
// refused as Corruption naming the operator and the partition.
#include "sql/state_decoder.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fs/test_util.h"
#include "sql/session.h"

namespace sluice::sql {
namespace {

class StateDecoderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SessionOptions options;
    options.warehouse = dir_.Join("wh");
    auto session = Session::Open(options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    session_ = std::move(session).ValueOrDie();
  }
  engine::Batch Exec(const std::string& sql) {
    auto r = session_->Execute(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? *r : engine::Batch();
  }
  static state::OperatorMetadata LimitMetadata() {
    state::OperatorMetadata m;
    m.operator_id = 0;
    m.operator_name = "globalLimit";
    return m;
  }
  static state::StateSchema LimitSchema() {
    state::StateSchema s;
    s.value.push_back({"count", "BIGINT", false});
    return s;
  }

  fs::ScopedTempDir dir_{"sluice-state-decoder"};
  std::unique_ptr<Session> session_;
};

TEST_F(StateDecoderTest, GlobalLimitShowsItsCount) {
  Exec("CREATE TABLE src (v BIGINT)");
  Exec("CREATE STREAMING TABLE lim AS SELECT v FROM STREAM src LIMIT 3");
  Exec("INSERT INTO src VALUES (1), (2)");
  Exec("REFRESH STREAMING TABLE lim");
  engine::Batch b = Exec("SELECT * FROM read_state('lim')");
  ASSERT_EQ(b.schema().size(), 4u);
  EXPECT_EQ(b.schema()[0].name, "operator_id");
  EXPECT_EQ(b.schema()[1].name, "operator_name");
  EXPECT_EQ(b.schema()[2].name, "partition_id");
  EXPECT_EQ(b.schema()[3].name, "count");
  ASSERT_EQ(b.num_rows(), 1);
  EXPECT_EQ(b.GetString(0, 1).value_or("?"), "globalLimit");
  EXPECT_EQ(b.GetInt64(0, 2).ValueOrDie().value_or(-1), 0);
  EXPECT_EQ(b.GetInt64(0, 3).ValueOrDie().value_or(-1), 2);

  // The next batch lets one of its rows through: the count is the limit, and stays there.
  Exec("INSERT INTO src VALUES (3), (4), (5)");
  Exec("REFRESH STREAMING TABLE lim");
  Exec("INSERT INTO src VALUES (6)");
  Exec("REFRESH STREAMING TABLE lim");
  b = Exec("SELECT count FROM read_state('lim')");
  ASSERT_EQ(b.num_rows(), 1);
  EXPECT_EQ(b.GetInt64(0, 0).ValueOrDie().value_or(-1), 3);
  b = Exec("SELECT count(*) FROM lim");
  EXPECT_EQ(b.GetInt64(0, 0).ValueOrDie().value_or(-1), 3);
}

TEST_F(StateDecoderTest, GlobalLimitDamagedEntriesAreCorruption) {
  // A key of one column instead of none.
  std::string count_row("\x01\x01\x80\x00\x00\x00\x00\x00\x00\x02", 10);  // count 2
  auto r = DecodeOperatorState(LimitMetadata(), LimitSchema(),
                               {StateEntry{0, std::string("\x01\x01\x00", 3), count_row}});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("operator 0 ('globalLimit'), partition 0"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("zero columns"), std::string::npos) << r.status().message();

  // A value cut short.
  r = DecodeOperatorState(LimitMetadata(), LimitSchema(),
                          {StateEntry{0, std::string(1, '\x01'), count_row.substr(0, 6)}});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();

  // The whole entry decodes to its count.
  r = DecodeOperatorState(LimitMetadata(), LimitSchema(),
                          {StateEntry{0, std::string(1, '\x01'), count_row}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->GetInt64(0, 3).ValueOrDie().value_or(-1), 2);

  // A schema that is not a limit's.
  state::StateSchema wrong = LimitSchema();
  wrong.key.push_back({"k", "VARCHAR", true});
  r = DecodeOperatorState(LimitMetadata(), wrong, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is not a globalLimit's"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace sluice::sql
