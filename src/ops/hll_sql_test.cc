#include "ops/hll_sql.h"

#include <gtest/gtest.h>

#include "engine/engine.h"

namespace sluice::ops {
namespace {

class HllSqlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = engine::Engine::Open();
    ASSERT_TRUE(e.ok());
    engine_ = std::move(*e);
    auto c = engine_->Connect();
    ASSERT_TRUE(c.ok());
    conn_ = std::move(*c);
  }
  // The estimate of the values `values_sql` (a query with column x), sketched in `parts` batches
  // (x % parts) that are then merged, as StreamingAggregate merges batches into its state.
  int64_t Estimate(const std::string& values_sql, int parts, int p = 9) {
    const std::string sql = "SELECT " + HllEstimateSql("s", p) + " FROM (SELECT " +
                            HllMergeSql("s", p) + " AS s FROM (SELECT " +
                            HllPartialSql("x", p, false) + " AS s FROM (" + values_sql +
                            ") GROUP BY hash(x) % " + std::to_string(parts) + "))";
    auto b = conn_->Query(sql);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    if (!b.ok()) return -1;
    auto v = b->GetInt64(0, 0);
    return v.ok() && v->has_value() ? **v : -1;
  }
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<engine::Connection> conn_;
};

TEST_F(HllSqlTest, SmallCountsAreExactAndNullsIgnored) {
  EXPECT_EQ(Estimate("SELECT * FROM (VALUES (1), (2), (2), (NULL)) t(x)", 1), 2);
  EXPECT_EQ(Estimate("SELECT NULL::INTEGER AS x", 1), 0);
  EXPECT_EQ(Estimate("SELECT 'v' || i AS x FROM range(0, 10) r(i)", 1), 10);
}

TEST_F(HllSqlTest, MergedPartialSketchesEqualTheSketchOfAllValues) {
  const std::string values = "SELECT i % 3000 AS x FROM range(0, 20000) r(i)";
  const int64_t whole = Estimate(values, 1);
  EXPECT_EQ(Estimate(values, 2), whole);
  EXPECT_EQ(Estimate(values, 7), whole);
  EXPECT_NEAR(static_cast<double>(whole), 3000.0, 3000.0 * 0.14);  // 3 standard errors
  const int64_t precise = Estimate(values, 5, 14);
  EXPECT_NEAR(static_cast<double>(precise), 3000.0, 3000.0 * 0.025);
}

TEST_F(HllSqlTest, PartialPerRowEqualsGrouped) {
  auto b = conn_->Query("SELECT " + HllPartialSql("42", 9, true) + " = (SELECT " +
                        HllPartialSql("x", 9, false) + " FROM (SELECT 42 AS x))");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  auto v = b->GetBool(0, 0);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, std::optional<bool>(true));
}

TEST_F(HllSqlTest, PrecisionFromRelativeSd) {
  EXPECT_EQ(*HllPrecisionForRelativeSd(0.05), 9);
  EXPECT_EQ(*HllPrecisionForRelativeSd(0.01), 14);
  EXPECT_FALSE(HllPrecisionForRelativeSd(0.5).ok());
  EXPECT_FALSE(HllPrecisionForRelativeSd(0.001).ok());
  EXPECT_FALSE(HllPrecisionForRelativeSd(0).ok());
}

}  // namespace
}  // namespace sluice::ops
