#include "ops/join_state_table.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fs/file_system.h"
#include "fs/test_util.h"
#include "ops/operator_state.h"

namespace sluice::ops {
namespace {

class JoinStateTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OperatorContext c;
    c.fs = fs::LocalFileSystem();
    c.checkpoint_root = dir_.path();
    c.num_partitions = 2;
    OperatorStateSpec spec;
    spec.operator_name = "symmetricHashJoin";
    spec.schema.key.push_back({"k", "VARCHAR", true});
    spec.force_in_memory = true;
    auto state = OperatorState::Open(c, spec);
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    state_ = std::move(state).ValueOrDie();
  }
  // Runs `work` over the batch loading `version` and commits it.
  void Batch(int64_t version, const std::function<void(JoinStateTable&)>& work) {
    auto done = state_->RunBatchOverAll(
        version,
        [&](const std::vector<state::StateStore*>& stores) {
          JoinStateTable table(stores);
          work(table);
          return Status::OK();
        },
        1);
    ASSERT_TRUE(done.ok()) << done.status().ToString();
  }
  fs::ScopedTempDir dir_{"sluice-jst"};
  std::unique_ptr<OperatorState> state_;
};

TEST(JoinStoredValueTest, RoundTripsAndRefusesShortValues) {
  const std::string bytes = EncodeJoinStoredValue(true, -5, "\x01row");
  ASSERT_EQ(bytes.size(), 13u);
  auto v = DecodeJoinStoredValue(bytes);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_TRUE(v->matched);
  EXPECT_EQ(v->state_us, -5);
  EXPECT_EQ(v->row, "\x01row");
  EXPECT_TRUE(DecodeJoinStoredValue(bytes.substr(0, 9)).status().IsCorruption());
}

TEST_F(JoinStateTableTest, AppendScanMatchAndEvictAKeysRowsInArrivalOrder) {
  const std::string a = "\x01"
                        "a",
                    b = "\x01"
                        "b";
  Batch(0, [&](JoinStateTable& t) {
    auto next = t.NextIndexes(JoinSide::kLeft, {&a, &b});
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(*next, (std::vector<int64_t>{0, 0}));
    ASSERT_TRUE(t.AnnounceNewRows(JoinSide::kLeft, {&a, &b}, {2, 1}, *next).ok());
    ASSERT_TRUE(t.Append(JoinSide::kLeft, a, &(*next)[0], false, 10, "\x01r1").ok());
    ASSERT_TRUE(t.Append(JoinSide::kLeft, a, &(*next)[0], false, 20, "\x01r2").ok());
    ASSERT_TRUE(t.Append(JoinSide::kLeft, b, &(*next)[1], false, 30, "\x01r3").ok());
    EXPECT_EQ(t.appended(), 3);
  });
  Batch(1, [&](JoinStateTable& t) {
    auto next = t.NextIndexes(JoinSide::kLeft, {&a, &b});
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(*next, (std::vector<int64_t>{2, 1}));
    auto right = t.Scan(JoinSide::kRight, {&a});
    ASSERT_TRUE(right.ok());
    EXPECT_TRUE((*right)[0].empty());  // the sides do not mix
    auto rows = t.Scan(JoinSide::kLeft, {&a, &b});
    ASSERT_TRUE(rows.ok());
    ASSERT_EQ((*rows)[0].size(), 2u);
    EXPECT_EQ((*rows)[0][0].value.row, "\x01r1");
    EXPECT_EQ((*rows)[0][1].value.row, "\x01r2");
    ASSERT_EQ((*rows)[1].size(), 1u);
    EXPECT_FALSE(t.IsMatched((*rows)[0][1]));
    ASSERT_TRUE(t.SetMatched((*rows)[0][1]).ok());
    EXPECT_TRUE(t.IsMatched((*rows)[0][1]));
  });
  Batch(2, [&](JoinStateTable& t) {
    std::vector<std::string> gone;
    auto removed = t.Evict(
        JoinSide::kLeft, [](int64_t us) { return us <= 20; },
        [&](const JoinStoredValue& v) { gone.push_back(v.row + (v.matched ? "+m" : "")); });
    ASSERT_TRUE(removed.ok()) << removed.status().ToString();
    EXPECT_EQ(*removed, 2);
    EXPECT_EQ(gone, (std::vector<std::string>{"\x01r1", "\x01r2+m"}));
    auto rows = t.Scan(JoinSide::kLeft, {&a, &b});
    ASSERT_TRUE(rows.ok());
    EXPECT_TRUE((*rows)[0].empty());
    EXPECT_EQ((*rows)[1].size(), 1u);
  });
}

}  // namespace
}  // namespace sluice::ops
