#include "ops/streaming_aggregate.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "fs/test_util.h"

namespace sluice::ops {
namespace {

class StreamingAggregateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = engine::Engine::Open();
    ASSERT_TRUE(e.ok());
    engine_ = std::move(*e);
    auto c = engine_->Connect();
    ASSERT_TRUE(c.ok());
    conn_ = std::move(*c);
  }
  engine::Batch Rows(const std::string& values) {  // "(k, v), ..." -> __k0 VARCHAR, __a0 INTEGER
    auto b = conn_->Query(values.empty()
                              ? "SELECT ''::VARCHAR AS __k0, 0::INTEGER AS __a0 LIMIT 0"
                              : "SELECT k::VARCHAR AS __k0, v::INTEGER AS __a0 FROM (VALUES " +
                                    values + ") t(k, v)");
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? *b : engine::Batch();
  }
  std::unique_ptr<StreamingAggregate> Make(sinks::OutputMode mode,
                                           const std::string& mirror_bytes = "") {
    StreamingAggregateOptions o;
    o.keys = {"__k0"};
    o.aggregates = {{AggregateFunction::kCountStar, "", "__agg0"},
                    {AggregateFunction::kSum, "__a0", "__agg1"},
                    {AggregateFunction::kAvg, "__a0", "__agg2"}};
    auto op = std::make_unique<StreamingAggregate>(o);
    OperatorContext c;
    c.engine = engine_.get();
    c.checkpoint_root = root_.empty() ? dir_.path() : root_;
    c.num_partitions = 3;
    c.output_mode = mode;
    c.conf["sluice.streaming.stateStore.providerClass"] = "memory";
    if (!mirror_bytes.empty()) c.conf["sluice.streaming.aggregate.stateMirrorMaxBytes"] = mirror_bytes;
    Status st = op->Open(c);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return op;
  }
  static std::vector<std::string> Strings(const engine::Batch& b) {
    std::vector<std::string> out;
    for (int64_t r = 0; r < b.num_rows(); ++r) {
      std::string row;
      for (size_t c = 0; c < b.num_columns(); ++c) {
        row += (c ? "," : "") + b.GetString(r, c).value_or("NULL");
      }
      out.push_back(row);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  Result<engine::Batch> Run(StreamingAggregate& op, int64_t batch, const engine::Batch& in) {
    OperatorBatch b;
    b.batch_id = BatchId(batch);
    return op.Process(b, {in});
  }

  fs::ScopedTempDir dir_;
  std::string root_;  // the checkpoint root when not dir_ itself
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<engine::Connection> conn_;
};

TEST_F(StreamingAggregateTest, CompleteMergesPartialsWithStateAndReRunsDeterministically) {
  auto op = Make(sinks::OutputMode::kComplete);
  auto out = Run(*op, 0, Rows("('a', 1), ('a', 2), ('b', NULL)"));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Strings(*out), (std::vector<std::string>{"a,2,3,1.5", "b,1,NULL,NULL"}));
  EXPECT_EQ(op->Progress().num_rows_total, 2);
  EXPECT_EQ(op->Progress().num_rows_updated, 2);
  out = Run(*op, 1, Rows("('b', 4), ('c', 5)"));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<std::string> expected = {"a,2,3,1.5", "b,2,4,4.0", "c,1,5,5.0"};
  EXPECT_EQ(Strings(*out), expected);
  // A re-run of batch 1 (after a crash) loads version 1 again: the same result.
  out = Run(*op, 1, Rows("('b', 4), ('c', 5)"));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Strings(*out), expected);
  // A new operator on the same checkpoint (a restart) continues from version 2.
  op = Make(sinks::OutputMode::kComplete);
  out = Run(*op, 2, Rows(""));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Strings(*out), expected);
  EXPECT_EQ(op->Progress().num_rows_updated, 0);
}

TEST_F(StreamingAggregateTest, UpdateEmitsOnlyChangedGroups) {
  auto op = Make(sinks::OutputMode::kUpdate);
  ASSERT_TRUE(Run(*op, 0, Rows("('a', 1), ('b', 2)")).ok());
  auto out = Run(*op, 1, Rows("('b', 3)"));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Strings(*out), (std::vector<std::string>{"b,2,5,2.5"}));
  EXPECT_FALSE(op->WantsNoDataBatch(0, 10));  // no watermark: never
}

// The in-memory state mirror (on by default, off with 0, given up past a tiny limit) must not
// change any result or count, through updates, a re-run batch and a restart.
TEST_F(StreamingAggregateTest, StateMirrorOnOffAndOverLimitGiveTheSameResults) {
  std::vector<std::vector<std::string>> runs;
  for (const std::string bytes : {"", "0", "200"}) {
    SCOPED_TRACE("stateMirrorMaxBytes '" + bytes + "'");
    root_ = dir_.path() + "/mirror" + std::to_string(runs.size());
    std::vector<std::string> seen;
    auto op = Make(sinks::OutputMode::kUpdate, bytes);
    auto record = [&](const Result<engine::Batch>& out) {
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      for (auto& row : Strings(*out)) seen.push_back(row);
      seen.push_back("total=" + std::to_string(op->Progress().num_rows_total));
    };
    record(Run(*op, 0, Rows("('a', 1), ('b', 2), ('c', 3)")));
    record(Run(*op, 1, Rows("('b', 3), ('d', 4)")));
    record(Run(*op, 1, Rows("('b', 3), ('d', 4)")));  // a re-run loads version 1 again
    op = Make(sinks::OutputMode::kUpdate, bytes);     // a restart
    record(Run(*op, 2, Rows("('a', 10), ('e', 1)")));
    record(Run(*op, 3, Rows("('a', 1)")));
    runs.push_back(seen);
  }
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0], runs[2]);
  EXPECT_EQ(runs[0].back(), "total=5");
}

TEST_F(StreamingAggregateTest, StateMirrorLimitMustBeAByteCount) {
  StreamingAggregate op(StreamingAggregateOptions{});
  OperatorContext c;
  c.engine = engine_.get();
  c.checkpoint_root = dir_.path();
  c.num_partitions = 1;
  c.conf["sluice.streaming.aggregate.stateMirrorMaxBytes"] = "10MB";
  Status st = op.Open(c);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.ToString().find("stateMirrorMaxBytes"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace sluice::ops
