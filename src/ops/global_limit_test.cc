#include "ops/global_limit.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fs/file_system.h"
#include "fs/test_util.h"

namespace sluice::ops {
namespace {

class GlobalLimitTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    auto engine = engine::Engine::Open();
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).ValueOrDie();
    auto conn = engine_->Connect();
    ASSERT_TRUE(conn.ok()) << conn.status().ToString();
    conn_ = std::move(conn).ValueOrDie();
  }

  OperatorContext Context() {
    OperatorContext c;
    c.engine = engine_.get();
    c.fs = fs::LocalFileSystem();
    c.checkpoint_root = dir_.Join("checkpoint");
    c.num_partitions = 4;  // the operator keeps one partition whatever the query's number
    c.conf["sluice.streaming.stateStore.providerClass"] = GetParam();
    return c;
  }

  // A batch of the values first, first + 1, ..., first + n - 1 (BIGINT v), in that order.
  engine::Batch Values(int first, int n) {
    auto b = conn_->Query("SELECT (" + std::to_string(first) + " + i)::BIGINT AS v FROM range(" +
                          std::to_string(n) + ") t(i) ORDER BY i");
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? *b : engine::Batch();
  }

  std::vector<int64_t> Column(const engine::Batch& b) {
    std::vector<int64_t> out;
    for (int64_t r = 0; r < b.num_rows(); ++r) out.push_back(b.GetInt64(r, 0).ValueOrDie().value());
    return out;
  }

  // Runs batch `id` on a new operator opened from the checkpoint (a restart before each batch).
  std::vector<int64_t> Run(int64_t limit, int64_t id, const engine::Batch& input,
                           StateOperatorProgress* progress = nullptr) {
    GlobalLimit op(GlobalLimitOptions{limit});
    Status opened = op.Open(Context());
    EXPECT_TRUE(opened.ok()) << opened.ToString();
    if (!opened.ok()) return {};
    OperatorBatch batch;
    batch.batch_id = BatchId(id);
    auto out = op.Process(batch, {input});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (progress != nullptr) *progress = op.Progress();
    return out.ok() ? Column(*out) : std::vector<int64_t>{};
  }

  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<engine::Connection> conn_;
  fs::ScopedTempDir dir_{"sluice-limit-test"};
};

TEST_P(GlobalLimitTest, FirstRowsOverBatchesAndRestartsThenNone) {
  StateOperatorProgress p;
  EXPECT_EQ(Run(4, 0, Values(1, 3), &p), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(p.operator_name, "globalLimit");
  EXPECT_EQ(p.num_rows_total, 1);
  EXPECT_EQ(p.num_rows_updated, 1);
  EXPECT_EQ(Run(4, 1, Values(10, 3), &p), (std::vector<int64_t>{10}));
  EXPECT_EQ(Run(4, 2, Values(20, 2), &p), std::vector<int64_t>{});
  EXPECT_EQ(p.num_rows_total, 1);
  EXPECT_EQ(p.num_rows_updated, 0);
  // Batch 1 run again (a crash before its commit): the count of version 1, the same rows.
  EXPECT_EQ(Run(4, 1, Values(10, 3)), (std::vector<int64_t>{10}));
}

TEST_P(GlobalLimitTest, NothingWrittenYetHoldsNoState) {
  StateOperatorProgress p;
  EXPECT_EQ(Run(2, 0, Values(1, 0), &p), std::vector<int64_t>{});
  EXPECT_EQ(p.num_rows_total, 0);
  EXPECT_EQ(Run(0, 1, Values(1, 5), &p), std::vector<int64_t>{});
  EXPECT_EQ(p.num_rows_total, 0);
}

TEST_P(GlobalLimitTest, RefusesANegativeLimit) {
  GlobalLimit op(GlobalLimitOptions{-1});
  Status s = op.Open(Context());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.ToString().find("-1 is not a row count"), std::string::npos) << s.ToString();
}

INSTANTIATE_TEST_SUITE_P(Providers, GlobalLimitTest, ::testing::Values("rocksdb", "memory"));

}  // namespace
}  // namespace sluice::ops
