#include "engine/registered_batch.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "engine/test_util.h"

namespace sluice::engine {
namespace {

using RegisteredBatchTest = testing::EngineTest;

TEST_F(RegisteredBatchTest, QueryOverRegistersForTheQueryOnly) {
  Batch rows = Q("SELECT * FROM (VALUES (1), (2), (3)) AS t(a)");
  auto out = QueryOver(conn_.get(), "__rb_in", rows, "SELECT sum(a) AS s FROM __rb_in");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->GetString(0, 0).value_or("NULL"), "6");
  // Gone afterwards, also after a failed query.
  EXPECT_FALSE(conn_->Query("SELECT * FROM __rb_in").ok());
  auto bad = QueryOver(conn_.get(), "__rb_in", rows, "SELECT nosuch FROM __rb_in");
  EXPECT_TRUE(bad.status().IsInvalidArgument()) << bad.status().ToString();
  EXPECT_FALSE(conn_->Query("SELECT * FROM __rb_in").ok());
}

TEST_F(RegisteredBatchTest, RegisteredBatchDropsItsNameOnReleaseOrDestruction) {
  Batch rows = Q("SELECT 7 AS a");
  {
    auto reg = RegisteredBatch::Make(conn_.get(), "__rb_a", rows);
    ASSERT_TRUE(reg.ok()) << reg.status().ToString();
    EXPECT_EQ(Scalar("SELECT a FROM __rb_a"), "7");
    RegisteredBatch moved = std::move(reg).ValueOrDie();
    EXPECT_EQ(moved.name(), "__rb_a");
    EXPECT_EQ(Scalar("SELECT a FROM __rb_a"), "7");
  }
  EXPECT_FALSE(conn_->Query("SELECT * FROM __rb_a").ok());
  auto reg = RegisteredBatch::Make(conn_.get(), "__rb_b", rows);
  ASSERT_TRUE(reg.ok());
  EXPECT_TRUE(reg->Release().ok());
  EXPECT_FALSE(conn_->Query("SELECT * FROM __rb_b").ok());
  EXPECT_TRUE(reg->Release().ok());  // once only
  // A batch without columns cannot be registered: the error, nothing registered.
  EXPECT_TRUE(RegisteredBatch::Make(conn_.get(), "__rb_c", Batch()).status().IsInvalidArgument());
}

// EmptyBatch gives the columns and types a `SELECT CAST(NULL AS t) ... LIMIT 0` gives, without
// SQL, for scalar, decimal, temporal and nested types.
TEST_F(RegisteredBatchTest, EmptyBatchHasTheSchemasColumnsAndNoRows) {
  Batch probe =
      Q("SELECT CAST(NULL AS BIGINT) AS id, CAST(NULL AS VARCHAR) AS \"Name\", "
        "CAST(NULL AS DECIMAL(18, 3)) AS amount, CAST(NULL AS TIMESTAMP WITH TIME ZONE) AS ts, "
        "CAST(NULL AS DATE) AS d, CAST(NULL AS STRUCT(a INTEGER, b VARCHAR[])) AS s, "
        "CAST(NULL AS MAP(VARCHAR, DOUBLE)) AS m, CAST(NULL AS BLOB) AS raw LIMIT 0");
  ASSERT_EQ(probe.num_columns(), 8u);
  auto empty = EmptyBatch(probe.schema());
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->num_rows(), 0);
  ASSERT_EQ(empty->num_columns(), probe.num_columns());
  for (size_t i = 0; i < probe.num_columns(); ++i) {
    EXPECT_EQ(empty->schema()[i].name, probe.schema()[i].name);
    EXPECT_EQ(empty->schema()[i].type.ToSql(), probe.schema()[i].type.ToSql());
  }
  // It registers and queries like any batch.
  auto n = QueryOver(conn_.get(), "__rb_empty", *empty, "SELECT count(*) FROM __rb_empty");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(n->GetString(0, 0).value_or("NULL"), "0");
  auto none = EmptyBatch(Schema{});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->num_columns(), 0u);
}

}  // namespace
}  // namespace sluice::engine
